-- flow-sweep.lua: one group's side of the flows' upkeep (src/queue/flows/relay.ts): clears
-- the outbox entries whose relay was found recorded, drops the flow data of parents no longer
-- kept (flow-lib.lua flow.trim), and reads the outbox entries still to relay.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] most outbox entries to read (0: none)
-- ARGV[2] most ended parents to look at (flow().trim)
-- ARGV[3..] child id, outbox entry pairs to clear: each goes only while the outbox still
--   holds that very entry (a child retried since may have left a newer one)
-- Returns { cleared, trimmed, then child id, entry pairs read }.
argCount(2, -1)
local limit = argInt(1, 'most outbox entries to read', 0, 1000)
local budget = argInt(2, 'most ended parents to look at', 0, 1000)
if #ARGV % 2 ~= 0 then
  error({ err = 'ERR skyq: wrong number of arguments: child id, entry pairs after the first 2, got ' .. #ARGV })
end
for i = 3, #ARGV, 2 do
  argText(i, 'child id')
end
local cleared = 0
for i = 3, #ARGV, 2 do
  if redis.call('HGET', outboxKey, ARGV[i]) == ARGV[i + 1] then
    cleared = cleared + redis.call('HDEL', outboxKey, ARGV[i])
  end
end
local out = { cleared, flow().trim(nowMs(), budget) }
if limit > 0 and redis.call('EXISTS', outboxKey) == 1 then
  -- One HSCAN step: a small outbox (a listpack) comes whole, a large one about `limit` at a time.
  local found = redis.call('HSCAN', outboxKey, 0, 'COUNT', limit)[2]
  for i = 1, math.min(#found, limit * 2), 2 do
    out[#out + 1] = found[i]
    out[#out + 1] = found[i + 1]
  end
end
return out
