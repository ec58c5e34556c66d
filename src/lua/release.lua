-- release.lua: hand leases back at once (graceful shutdown; or a launcher for its
-- actor thread that died). A message that is due goes back to wait in its place by
-- priority and due time; one leased ahead of its due time (claim's lookahead) goes
-- back to the delayed set, so nobody gets it early.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] '1' to count an attempt (a handler that was still running and would
--   not stop: whether it was the last is decided at its next lease), '' not to
-- ARGV[3] the last error kept with a counted attempt (UTF-8, never the byte 0xff: fail.lua;
--   '' = 'still running when its consumer stopped'): the launcher that hands back a dead
--   actor thread's leases says why it died (src/runtime/hand-back.ts), which claim.lua then
--   names in a dead letter's reason
-- ARGV[4..] token, count, ids..., token, count, ids...
-- Returns how many the caller still held and handed back.
argCount(6, -1)
local unit = argUnit(1)
argOneOf(2, 'whether to count an attempt', { '1', '' })
local lastError = ARGV[3] == '' and 'still running when its consumer stopped' or ARGV[3]
argLeases(4, #ARGV)
local held, _, dues = leasedBy(4, true)
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
    errPairs[#errPairs + 1] = lastError
  end
  bulk('HSET', attKey, attPairs)
  bulk('HSET', errKey, errPairs)
end
local now = nowMs()
local dueIds, dueTimes, later, notDue = {}, {}, {}, {}
local earliest = nil
for i = 1, #held do
  if dues[i] > now then
    later[#later + 1] = dues[i] / unit
    later[#later + 1] = held[i]
    notDue[#notDue + 1] = held[i]
    earliest = math.min(earliest or dues[i], dues[i])
  else
    dueIds[#dueIds + 1] = held[i]
    dueTimes[#dueTimes + 1] = dues[i]
  end
end
if #dueIds > 0 then
  requeue(dueIds, dueTimes, unit)
  wake()
end
if #later > 0 then
  bulk('HDEL', dueKey, notDue)
  bulk('ZADD', delayedKey, later)
  wakeIfEarlier(earliest)
end
return #held
