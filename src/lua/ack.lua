-- ack.lua: the consumer finished these messages; forget them.
-- KEYS: the group's keys (lib.lua)
-- ARGV: ids
-- Returns how many were still leased (a stale ack after an expired lease is ignored).
return ackLeased(ARGV)
