-- release.lua: hand leases back at once (graceful shutdown): the messages are
-- ready again for another consumer, and no attempt is counted.
-- KEYS: the group's keys (lib.lua)
-- ARGV: ids
-- Returns how many were still leased and went back.
local leased = membersOf(activeKey, ARGV)
if #leased == 0 then
  return 0
end
bulk('ZREM', activeKey, leased)
local recs = bulkRead('HMGET', msgKey, leased)
local seq = redis.call('INCRBY', seqKey, #leased) - #leased
local ready = {}
for i = 1, #leased do
  -- Unreadable records get priority 0; the next claim dead-letters them.
  local priority = recs[i] and parseHeader(recs[i]) or 0
  ready[#ready + 1] = readyScore(priority, seq + i)
  ready[#ready + 1] = leased[i]
end
bulk('ZADD', readyKey, ready)
wake()
return #leased
