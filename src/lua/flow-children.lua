-- flow-children.lua (read only): flow parents' children and their outcomes (flow-lib.lua),
-- for a parent's handler (job.children) and for get() and the flow views.
-- KEYS: the parents' group's keys (lib.lua)
-- ARGV: parent ids
-- Returns per parent: { left, children, ref, count, then an outcome per child }: left the
-- children not ended yet (false when the id has no flow data), children its children as
-- JSON [[group, id, optional, name], ...] in the order given, ref its own parent ref (false
-- for a root), then each child's outcome in that order ('' not ended, 'd<ms>|<kind><result>',
-- 'x<reason>', 'c' cancelled).
argCount(1, 1000)
for i = 1, #ARGV do
  argText(i, 'parent id')
end
local out = {}
for i = 1, #ARGV do
  local parent = ARGV[i]
  local head = redis.call('HMGET', flowKey, parent .. ':n', parent .. ':c', parent .. ':u')
  local children = head[2] and cjson.decode(head[2]) or {}
  out[#out + 1] = head[1]
  out[#out + 1] = head[2]
  out[#out + 1] = head[3]
  out[#out + 1] = #children
  if #children > 0 then
    local fields = {}
    for k, child in ipairs(children) do
      fields[k] = parent .. ':r:' .. child[2]
    end
    for _, outcome in ipairs(bulkRead('HMGET', flowKey, fields)) do
      out[#out + 1] = outcome
    end
  end
end
return out
