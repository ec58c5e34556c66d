#!lua flags=no-writes,allow-cross-slot-keys
-- watch-many.lua (read only): what idle consumers may have missed, for many
-- groups in one call (a launcher checks all its idle groups on a server with
-- one call per tick). Programs that only ZADD to a delayed set send no
-- wake-up, a token can go to another launcher's actor, and a lease another
-- consumer holds can run out. Not prefixed with lib.lua: the flags line must
-- come first. On a cluster the groups may sit in several slots of one master:
-- a script may read such keys only when they come as arguments, not as KEYS.
-- KEYS[1] the first group's delayed set (it routes the call to its master)
-- It also reads the heads of the idle sorted sets an intake consumes (zsetIntake,
-- src/runtime/intake/zset-lanes.ts) on the same server: they cost no call of their own.
-- KEYS[1] the first group's delayed set, or the first sorted set (it routes the call)
-- ARGV[1] unit: ms per delayed-set score unit; ARGV[2] the key prefix
-- ARGV[3..] the groups (their key names are made here: see src/base/keys.ts)
-- then, optionally, 'zsets' and pairs of a sorted set's name and its unit (ms per score)
-- Returns for each group: next event in ms (the earlier of the delayed set's
-- head and the first lease to expire, >= 0; -1 when neither), ready count, paused;
-- then for each sorted set: its head's due ms (-1: empty, -2: not a sorted set), its size
argCount(3, -1)
local unit, prefix = argUnit(1), argText(2, 'key prefix')
local zsets = #ARGV + 1
for i = 3, #ARGV do
  if ARGV[i] == 'zsets' then
    zsets = i
    break
  end
  argInt(i, 'group', 0, 1000000)
end
if zsets <= #ARGV and (#ARGV - zsets) % 2 ~= 0 then
  refuse(#ARGV, 'sorted sets must come in pairs of name and unit')
end
for i = zsets + 1, #ARGV, 2 do
  argText(i, 'sorted set')
  argUnit(i + 1)
end
for i = 3, zsets - 1 do
  guardFormat('{' .. prefix .. ':' .. ARGV[i] .. '}:format', false) -- read only: refuse, never raise
end
local out = {}
for i = 3, zsets - 1 do
  local base = prefix .. ':' .. ARGV[i]
  local nextMs = -1
  local head = redis.call('ZRANGE', base, 0, 0, 'WITHSCORES')
  if head[2] then
    -- Clamped into what a reply integer holds: other programs may ZADD -5 or -inf
    -- (due since ever: 0) or +inf (never: the far future).
    local ms = tonumber(head[2]) * unit
    nextMs = ms <= 0 and 0 or (ms >= 9e15 and 9e15 or math.floor(ms + 0.5))
  end
  -- The active set's first lease: its placeholder (format 7, lib.lua) is the only member at +inf.
  local lease = redis.call('ZRANGE', '{' .. base .. '}:active', 0, 0, 'WITHSCORES')
  if lease[2] and lease[2] ~= 'inf' and (nextMs == -1 or tonumber(lease[2]) < nextMs) then
    nextMs = tonumber(lease[2])
  end
  out[#out + 1] = nextMs
  out[#out + 1] = redis.call('ZCARD', '{' .. base .. '}:ready')
  out[#out + 1] = redis.call('EXISTS', '{' .. base .. '}:paused')
end
-- Another program's sorted set: its head (clamped as above) and size. A key of another type
-- is the intake's to report (its own step fails on it): -2 here, and nothing read.
for i = zsets + 1, #ARGV, 2 do
  local kind = redis.call('TYPE', ARGV[i])['ok']
  if kind == 'zset' then
    local ms = tonumber(redis.call('ZRANGE', ARGV[i], 0, 0, 'WITHSCORES')[2]) * tonumber(ARGV[i + 1])
    out[#out + 1] = ms <= 0 and 0 or (ms >= 9e15 and 9e15 or math.floor(ms + 0.5))
    out[#out + 1] = redis.call('ZCARD', ARGV[i])
  else
    out[#out + 1] = kind == 'none' and -1 or -2
    out[#out + 1] = 0
  end
end
return out
