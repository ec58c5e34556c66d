-- release.lua: hand leases back at once (graceful shutdown), and no attempt is
-- counted. A message that is due goes back to the ready set for another
-- consumer; one leased ahead of its due time (claim's lookahead) goes back to
-- the delayed set, so nobody gets it early.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit
-- ARGV[2..] ids
-- Returns how many were still leased and went back.
local unit = tonumber(ARGV[1])
local leased = membersOf(activeKey, argvFrom(2))
if #leased == 0 then
  return 0
end
bulk('ZREM', activeKey, leased)
local recs = bulkRead('HMGET', msgKey, leased)
local dues = bulkRead('HMGET', dueKey, leased)
local now = nowMs()
local seq = redis.call('INCRBY', seqKey, #leased) - #leased
local ready, delayed, notDue = {}, {}, {}
local earliest = nil
for i = 1, #leased do
  local dueMs = tonumber(dues[i])
  if dueMs and dueMs > now then
    delayed[#delayed + 1] = num(dueMs / unit)
    delayed[#delayed + 1] = leased[i]
    notDue[#notDue + 1] = leased[i]
    if earliest == nil or dueMs < earliest then
      earliest = dueMs
    end
  else
    -- Unreadable records get priority 0; the next claim dead-letters them.
    local priority = recs[i] and parseHeader(recs[i]) or 0
    ready[#ready + 1] = readyScore(priority, seq + i)
    ready[#ready + 1] = leased[i]
  end
end
if #ready > 0 then
  bulk('ZADD', readyKey, ready)
  wake()
end
if #delayed > 0 then
  wakeIfEarlier(earliest / unit)
  bulk('ZADD', delayedKey, delayed)
  bulk('HDEL', dueKey, notDue)
end
return #leased
