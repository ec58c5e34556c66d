-- flow-states.lua (read only): where each of some ids stands in this group, for the flow views
-- (a parent's children counted by state, a flow's tree): inspect.lua's states, one call for all.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2..] ids
-- Returns a state per id: delayed, ready, active, waiting, dead, done, or '' when unknown here.
argCount(2, 10001)
local unit = argUnit(1)
for i = 2, #ARGV do
  argText(i, 'id')
end
local ids = argvFrom(2)
local delayed = bulkRead('ZMSCORE', delayedKey, ids)
local due = bulkRead('HMGET', dueKey, ids)
local waiting = bulkRead('ZMSCORE', waitingKey, ids)
local dead = bulkRead('ZMSCORE', deadKey, ids)
local done = bulkRead('ZMSCORE', doneKey, ids)
local now = nowMs()
local out = {}
for i = 1, #ids do
  local state = ''
  if delayed[i] then
    state = msOfScore(delayed[i], unit) <= now and 'ready' or 'delayed'
  elseif due[i] then
    state = string.find(due[i], '/', 1, true) and 'active' or 'ready'
  elseif waiting[i] then
    state = 'waiting'
  elseif dead[i] then
    state = 'dead'
  elseif done[i] then
    state = 'done'
  end
  out[i] = state
end
return out
