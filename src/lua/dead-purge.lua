-- dead-purge.lua: delete dead letters for good.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] '*' for the oldest ARGV[2] dead letters, or 'ids' with ARGV[2..] ids
-- Returns how many were deleted ('*'), or the ids that were ('ids': the caller names the others).
argDeadSelection()
local ids = selectDead()
if #ids == 0 then
  return deadReply(ids)
end
bulk('ZREM', deadKey, ids)
forget(ids)
return deadReply(ids)
