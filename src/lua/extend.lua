-- extend.lua: renew the leases of messages a consumer is still working on.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] new lease length in ms from now; ARGV[2..] ids
-- Returns how many leases were renewed (ids no longer leased are skipped).
local leased = membersOf(activeKey, argvFrom(2))
if #leased == 0 then
  return 0
end
local expiry = num(nowMs() + tonumber(ARGV[1]))
local leases = {}
for i = 1, #leased do
  leases[#leases + 1] = expiry
  leases[#leases + 1] = leased[i]
end
bulk('ZADD', activeKey, leases)
return #leased
