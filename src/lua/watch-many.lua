#!lua flags=no-writes,allow-cross-slot-keys
-- watch-many.lua (read only): what idle consumers may have missed, for many
-- groups in one call (a launcher checks all its idle groups on a server with
-- one call per tick). Programs that only ZADD to a delayed set send no
-- wake-up, a token can go to another launcher's actor, and a lease another
-- consumer holds can run out. Not prefixed with lib.lua: the flags line must
-- come first. On a cluster the groups may sit in several slots of one master:
-- a script may read such keys only when they come as arguments, not as KEYS.
-- KEYS[1] the first group's delayed set (it routes the call to its master)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2..] for each group: its delayed set, active set, ready set, paused flag
-- Returns for each group: next event in ms (the earlier of the delayed set's
-- head and the first lease to expire; -1 when neither), ready count, paused
local unit = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 4 do
  local nextMs = -1
  local head = redis.call('ZRANGE', ARGV[i], 0, 0, 'WITHSCORES')
  if head[2] then
    nextMs = math.floor(tonumber(head[2]) * unit + 0.5)
  end
  local lease = redis.call('ZRANGE', ARGV[i + 1], 0, 0, 'WITHSCORES')
  if lease[2] and (nextMs == -1 or tonumber(lease[2]) < nextMs) then
    nextMs = tonumber(lease[2])
  end
  out[#out + 1] = nextMs
  out[#out + 1] = redis.call('ZCARD', ARGV[i + 2])
  out[#out + 1] = redis.call('EXISTS', ARGV[i + 3])
end
return out
