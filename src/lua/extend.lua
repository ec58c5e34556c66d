-- extend.lua: renew the leases of messages a consumer is still working on.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] new lease length in ms from now
-- ARGV[2..] token, count, ids..., token, count, ids...
-- Returns { renewed, stale ids... } (a stale lease is not renewed).
argCount(4, -1)
argInt(1, 'lease length in ms', 0)
argLeases(2, #ARGV)
local held, stale = leasedBy(2, false)
if #held > 0 then
  local expiry = string.format('%d', nowMs() + tonumber(ARGV[1]))
  local leases = {}
  for i = 1, #held do
    leases[#leases + 1] = expiry
    leases[#leases + 1] = held[i]
  end
  bulk('ZADD', activeKey, leases)
end
local out = { #held }
for i = 1, #stale do
  out[#out + 1] = stale[i]
end
return out
