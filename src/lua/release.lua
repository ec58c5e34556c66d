-- release.lua: hand leases back at once (graceful shutdown). A message that
-- is due goes back to the ready set, in its place by priority and due time;
-- one leased ahead of its due time (claim's lookahead) goes back to the
-- delayed set, so nobody gets it early.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] '1' to count an attempt (a handler that was still running and would
--   not stop: whether it was the last is decided at its next lease), '' not to
-- ARGV[3..] token, count, ids..., token, count, ids...
-- Returns how many the caller still held and handed back.
local unit = tonumber(ARGV[1])
local held, dues = leasedBy(3)
if #held == 0 then
  return 0
end
bulk('ZREM', activeKey, held)
if ARGV[2] == '1' then
  local atts = bulkRead('HMGET', attKey, held)
  local attPairs, errPairs = {}, {}
  for i = 1, #held do
    attPairs[#attPairs + 1] = held[i]
    attPairs[#attPairs + 1] = (tonumber(atts[i]) or 0) + 1
    errPairs[#errPairs + 1] = held[i]
    errPairs[#errPairs + 1] = 'still running when its consumer stopped'
  end
  bulk('HSET', attKey, attPairs)
  bulk('HSET', errKey, errPairs)
end
local now = nowMs()
local readyIds, readyDues, delayed, notDue = {}, {}, {}, {}
local earliest = nil
for i = 1, #held do
  if dues[i] > now then
    delayed[#delayed + 1] = dues[i] / unit
    delayed[#delayed + 1] = held[i]
    notDue[#notDue + 1] = held[i]
    earliest = math.min(earliest or dues[i], dues[i])
  else
    readyIds[#readyIds + 1] = held[i]
    readyDues[#readyDues + 1] = dues[i]
  end
end
if #readyIds > 0 then
  toReady(readyIds, readyDues)
  wake()
end
if #delayed > 0 then
  bulk('HDEL', dueKey, notDue)
  bulk('ZADD', delayedKey, delayed)
  wakeIfEarlier(earliest)
end
return #held
