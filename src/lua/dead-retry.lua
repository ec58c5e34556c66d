-- dead-retry.lua: put dead letters back to work, ready now, attempts reset.
-- A record that cannot be read is dead-lettered again when it is next leased.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] '*' for the oldest ARGV[2] dead letters, or 'ids' with ARGV[2..] ids
-- Returns how many went back ('*'), or the ids that did ('ids': the caller names the others).
argDeadSelection()
local ids = selectDead()
if #ids == 0 then
  return deadReply(ids)
end
local now = nowMs()
local dues = {}
for i = 1, #ids do
  dues[i] = now
end
bulk('ZREM', deadKey, ids)
for _, key in ipairs({ attKey, errKey, reasonKey }) do
  bulk('HDEL', key, ids)
end
toReady(ids, dues)
wake()
-- A flow parent among them keeps its flow data: it runs again with its children's outcomes
-- (flow-lib.lua flow.trim would take a parent neither done nor dead for one no longer kept).
if redis.call('EXISTS', flowEndsKey) == 1 then
  bulk('ZREM', flowEndsKey, ids)
end
return deadReply(ids)
