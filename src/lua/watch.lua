-- watch.lua (read only): what an idle consumer may have missed. Programs that
-- only ZADD to the delayed set send no wake-up, so launchers look here often.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- Returns { head of the delayed set in ms (-1 when empty), ready count, paused }
local head = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
local headMs = -1
if head[2] then
  headMs = math.floor(tonumber(head[2]) * tonumber(ARGV[1]) + 0.5)
end
return { headMs, redis.call('ZCARD', readyKey), redis.call('EXISTS', pausedKey) }
