-- watch.lua (read only): what an idle consumer may have missed. Programs that
-- only ZADD to the delayed set send no wake-up, a token can go to another
-- launcher's actor, and a lease another consumer holds can run out: launchers
-- look here often for their idle actors.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- Returns { next event in ms: the earlier of the delayed set's head and the
--   first lease to expire (-1 when neither), ready count, paused }
local nextMs = -1
local head = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
if head[2] then
  nextMs = math.floor(tonumber(head[2]) * tonumber(ARGV[1]) + 0.5)
end
local lease = redis.call('ZRANGE', activeKey, 0, 0, 'WITHSCORES')
if lease[2] and (nextMs == -1 or tonumber(lease[2]) < nextMs) then
  nextMs = tonumber(lease[2])
end
return { nextMs, redis.call('ZCARD', readyKey), redis.call('EXISTS', pausedKey) }
