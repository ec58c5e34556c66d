-- ack.lua: the consumer finished these messages; forget them.
-- KEYS: the group's keys (lib.lua)
-- ARGV: the retention ("<count>:<age ms>", '' keeps nothing), the events flag
--   ('1' on: events.lua), how many lease arguments follow, the leases (token,
--   count, ids..., as claimed), then when kept one result per id:
--   "<duration ms>|<kind><result>", then with events on one name per id (history.lua)
-- Returns { acked, stale ids... }: a lease that expired and went to another
-- consumer (or back to the queue) is not the caller's to ack: nothing changes. An id
-- finished already (this ack sent again after its reply was lost) is neither.
argAcks(1)
local acked, stale = ackLeased(1)
local out = { acked }
for i = 1, #stale do
  out[#out + 1] = stale[i]
end
return out
