-- intake-commit.lua: the oldest items of a holding list went into skyq; drop them
-- from it and count them, in one step, so each item's position keeps naming the
-- same message id (src/queue/intake/holding.ts).
-- KEYS[1] the holding list (in the source list's slot)
-- KEYS[2] its counter: how many items have left it from the right so far
-- ARGV[1] how many items, from the right end, went in
-- ARGV[2] the counter's value the caller read with them
-- Returns 1, or 0 when the counter moved: another launcher adopted the list
-- (intake-adopt.lua) and re-adds those items under the same ids; nothing changes.
argCount(2)
argInt(1, 'how many items went in', 0, 1000000)
argInt(2, "the counter's value", 0)
local taken = tonumber(redis.call('GET', KEYS[2]) or '0')
if taken ~= tonumber(ARGV[2]) then
  return 0
end
local count = tonumber(ARGV[1])
redis.call('LTRIM', KEYS[1], 0, -(count + 1))
redis.call('SET', KEYS[2], taken + count)
return 1
