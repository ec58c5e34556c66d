-- ack.lua: the consumer finished these messages; forget them.
-- KEYS: the group's keys (lib.lua)
-- ARGV: token, count, ids..., token, count, ids... (the leases, as claimed)
-- Returns { acked, stale ids... }: a lease that expired and went to another
-- consumer (or back to the queue) is not the caller's to ack: nothing changes.
local acked, stale = ackLeased(1)
local out = { acked }
for i = 1, #stale do
  out[#out + 1] = stale[i]
end
return out
