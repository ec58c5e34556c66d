-- intake-zmove.lua: moves the members of another program's sorted set that are due
-- on Redis's clock (score × unit ≤ now) into a launcher's holding list, lowest score
-- first, and reads the holding list's oldest items back (src/runtime/intake/zset-lanes.ts).
-- ZRANGEBYSCORE, ZREM and LPUSH in one call: a member leaves the set exactly as it
-- enters the holding list, so two launchers never take the same one, and a crash
-- leaves it in one place or the other. Each item is `<due ms>:<member>` (the score in
-- ms, 0 for a score of 0 or below), so the due time survives in the holding list too
-- (src/queue/intake/zset-items.ts). No format guard: it only moves another program's
-- members within their own slot, as intake-commit.lua does.
-- KEYS[1] the sorted set; KEYS[2] the holding list (same slot); KEYS[3] its counter
-- ARGV[1] ms per score unit (1, 10 or 1000)
-- ARGV[2] most members to move (0: none, only read)
-- ARGV[3] bytes after which no further member is moved (at least one is, when due)
-- ARGV[4] most holding-list items to read back
-- Returns { moved, next due ms (-1: the set is empty), members left, Redis now ms,
--   the counter, the holding list's length, then its oldest items, oldest first }
argCount(4)
local unit = argUnit(1)
local most = argInt(2, 'most members to move', 0, 1000)
local budget = argInt(3, 'bytes per move', 1)
local read = argInt(4, 'most items to read back', 0, 1000)
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ', not a zset')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Due on Redis's clock, in the set's own unit (whole ms: exact in a double).
local moved = 0
if most > 0 then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now / unit, 'WITHSCORES', 'LIMIT', 0, most)
  local items, members, bytes = {}, {}, 0
  for i = 1, #due, 2 do
    if bytes >= budget then
      break
    end
    local ms = tonumber(due[i + 1]) * unit
    ms = ms <= 0 and 0 or math.floor(ms + 0.5)
    items[#items + 1] = string.format('%d', ms) .. ':' .. due[i]
    members[#members + 1] = due[i]
    bytes = bytes + #due[i]
  end
  moved = #members
  if moved > 0 then
    redis.call('ZREM', KEYS[1], unpack(members))
    -- Each LPUSH argument goes on the left in turn: the lowest score ends up rightmost, and
    -- items leave from the right (the holding list's order, src/queue/intake/holding.ts).
    redis.call('LPUSH', KEYS[2], unpack(items))
  end
end

local nextMs = -1
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[2] then
  -- Clamped into what a reply integer holds (+inf: never, the far future), as watch-many.lua.
  local ms = tonumber(head[2]) * unit
  nextMs = ms <= 0 and 0 or (ms >= 9e15 and 9e15 or math.floor(ms + 0.5))
end
local out = {
  moved,
  nextMs,
  redis.call('ZCARD', KEYS[1]),
  now,
  tonumber(redis.call('GET', KEYS[3]) or '0'),
  redis.call('LLEN', KEYS[2]),
}
if read > 0 then
  local oldest = redis.call('LRANGE', KEYS[2], -read, -1)
  for i = #oldest, 1, -1 do
    out[#out + 1] = oldest[i]
  end
end
return out
