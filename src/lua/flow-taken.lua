-- flow-taken.lua (read only): which of a flow's caller ids in this group are taken, before any
-- node of the flow is written (src/queue/flows/add.ts). flow-add.lua refuses the same ids, but
-- only in its own group's call: a node in another group goes out a wave after its parents, which
-- would by then wait for a child that never comes, and count a stranger as theirs.
-- KEYS: the group's keys (lib.lua)
-- ARGV: pairs of a caller id and the SHA-1 (hex) of the record the flow would store under it
-- Returns the ids held by a pending message (delayed, ready, active or a waiting parent) whose
-- record is not this one (the same record is this very flow sent again: flow-add.lua leaves it).
-- Records are compared by their hash, so the check sends 40 bytes a node whatever its body.
argCount(2, 20000)
if #ARGV % 2 ~= 0 then
  refuse(#ARGV, 'expected pairs of an id and a record')
end
local ids, hashes = {}, {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = argText(i, 'id')
  if not string.match(ARGV[i + 1], '^%x+$') or #ARGV[i + 1] ~= 40 then
    refuse(i + 1, "a record's SHA-1 must be 40 hex digits")
  end
  hashes[#hashes + 1] = string.lower(ARGV[i + 1])
end
local stored = bulkRead('HMGET', msgKey, ids)
local delayed = bulkRead('ZMSCORE', delayedKey, ids)
local due = bulkRead('HMGET', dueKey, ids)
local waiting = bulkRead('ZMSCORE', waitingKey, ids)
local taken = {}
for n = 1, #ids do
  if (delayed[n] or due[n] or waiting[n]) and not (stored[n] and redis.sha1hex(stored[n]) == hashes[n]) then
    taken[#taken + 1] = ids[n]
  end
end
return taken
