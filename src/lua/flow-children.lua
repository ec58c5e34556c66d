-- flow-children.lua (read only): flow parents' children and their outcomes (flow-lib.lua),
-- for a parent's handler (job.children) and for get() and the flow views.
-- KEYS: the parents' group's keys (lib.lua)
-- ARGV[1] 'all' (a parent's handler: each done child's result too) or 'states' (the views:
--   a done child's outcome is 'd' alone, so a reply stays small whatever the results weigh)
-- ARGV[2..] parent ids
-- Returns per parent: { left, children, ref, count, then an outcome per child }: left the
-- children not ended yet (false when the id has no flow data), children its children as
-- JSON [[group, id, optional, name], ...] in the order given, ref its own parent ref (false
-- for a root), then each child's outcome in that order ('' not ended, 'd<ms>|<kind><result>',
-- 'x<reason>', 'c' cancelled).
argCount(2, 1001)
local states = argOneOf(1, 'what to read', { 'all', 'states' }) == 'states'
for i = 2, #ARGV do
  argText(i, 'parent id')
end
local out = {}
for i = 2, #ARGV do
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
      out[#out + 1] = (states and string.sub(outcome, 1, 1) == 'd') and 'd' or outcome
    end
  end
end
return out
