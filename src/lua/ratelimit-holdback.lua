-- ratelimit-holdback.lua: hand back leased messages a rate limit holds back, to wait
-- again in the delayed set until their name's bucket is expected to have a token for
-- them. No attempt is counted and no error noted: they never started. A message leased
-- ahead of its due time goes back no earlier than that due time.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] n: how many hold times follow
-- ARGV[3..2+n] for each message named below, in order: how long to hold it, ms from now
-- ARGV[3+n..] token, count, ids..., token, count, ids... (the leases)
-- Returns how many the caller still held and handed back.
argCount(5, -1)
local unit, n = argUnit(1), argInt(2, 'how many hold times follow', 1, #ARGV - 4)
for i = 3, 2 + n do
  argInt(i, 'a hold time in ms', 0)
end
if argLeases(3 + n, #ARGV) ~= n then
  refuse(2, 'how many hold times follow must be the number of leased ids named')
end
local held, _, dues, positions = leasedBy(3 + n, true)
if #held == 0 then
  return 0
end
local now = nowMs()
bulk('ZREM', activeKey, held)
bulk('HDEL', dueKey, held)
local scores, earliest = {}, nil
for i = 1, #held do
  local at = math.max(dues[i], now + (tonumber(ARGV[2 + positions[i]]) or 0))
  scores[#scores + 1] = at / unit
  scores[#scores + 1] = held[i]
  earliest = math.min(earliest or at, at)
end
bulk('ZADD', delayedKey, scores)
wakeIfEarlier(earliest)
return #held
