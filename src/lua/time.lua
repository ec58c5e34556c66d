-- time.lua (read only): the clock of the server that holds this group. On a
-- cluster each group's scripts run on its own master, whose clock decides
-- what is due there; a plain TIME would go to any node.
-- KEYS: the group's keys (lib.lua)
-- ARGV: none
-- Returns TIME's { seconds, microseconds }
argCount(0)
return redis.call('TIME')
