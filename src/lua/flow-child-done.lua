-- flow-child-done.lua: outcomes of flow children in other slots, relayed from their outbox
-- into their parents' slot (src/queue/flows/relay.ts, flow-lib.lua). Idempotent: an outcome
-- already recorded changes nothing, so a relay sent again (after a kill -9 or a failover
-- between the relay and the outbox's clearing) counts no child twice.
-- KEYS: the parents' group's keys (lib.lua)
-- ARGV[1] how many outcomes follow
-- then per outcome: the child's id, its outbox entry ("<parent ref>\n<outcome>": the ref
--   names a parent in this group; the outcome is 'd<ms>|<kind><result>', 'x<reason>' or 'c')
-- Returns for each: 1 recorded now, 2 recorded before, 0 the parent does not wait for it
-- (ended, cancelled, gone).
argCount(1, -1)
local count = argInt(1, 'count of outcomes', 1, 10000)
argCount(1 + count * 2)
local refs, outcomes = {}, {}
for i = 2, #ARGV, 2 do
  argText(i, 'child id')
  local ref, outcome = string.match(ARGV[i + 1], '^(%d+:[om]:[^\n]+)\n([dxc].*)$')
  if not ref or flow().parseRef(ref) ~= flow().group() then
    refuse(i + 1, "an outbox entry must be '<this group>:<o|m>:<parent id>\\n<d|x|c><outcome>'")
  end
  refs[#refs + 1], outcomes[#outcomes + 1] = ref, outcome
end
-- One batch per parent (flow-lib.lua childrenEnded), the statuses put back in ARGV's order.
local now = nowMs()
local byParent, parents = {}, {}
for k = 1, count do
  local _, optional, parent = flow().parseRef(refs[k])
  if not byParent[parent] then
    byParent[parent] = { ends = {}, at = {} }
    parents[#parents + 1] = parent
  end
  local batch = byParent[parent]
  batch.ends[#batch.ends + 1] = { ARGV[2 * k], optional, outcomes[k] }
  batch.at[#batch.at + 1] = k
end
local out = {}
for _, parent in ipairs(parents) do
  local batch = byParent[parent]
  for i, status in ipairs(flow().childrenEnded(parent, batch.ends, now)) do
    out[batch.at[i]] = status
  end
end
return out
