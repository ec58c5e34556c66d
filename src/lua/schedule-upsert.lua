-- schedule-upsert.lua: create or change a schedule, and its pending occurrence with it.
-- The same spec again (any number of upserters at once) changes nothing; a new spec
-- replaces the old one's waiting occurrence (never leaves one beside it) and takes
-- effect from its next occurrence; the count of occurrences so far is kept.
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] schedule id; ARGV[3] digest of the spec (and record)
-- ARGV[4] the new state, JSON, without next, last, count
-- ARGV[5] record head; ARGV[6] record tail (schedule-lib.lua)
-- ARGV[7] next occurrence's grid ms under the new spec ('' = none)
-- ARGV[8] the occurrences' priority
-- Returns the state now, JSON.
argCount(8)
local unit, id = argUnit(1), argText(2, 'schedule id')
argText(3, 'digest')
if not string.match(ARGV[4], '^{') or not pcall(cjson.decode, ARGV[4]) then
  refuse(4, 'the new state must be a JSON object')
end
argOptionalInt(7, "next occurrence's grid ms", 0)
argInt(8, "the occurrences' priority", 0, 1000000)
local stateField = 's:' .. id
local oldText = redis.call('HGET', schedulesKey, stateField)
local old = oldText and cjson.decode(oldText) or nil
if old and old.digest == ARGV[3] then
  return oldText
end
if old and old.next then
  cancelWaiting(occurrenceId(id, old.next))
end
local state = cjson.decode(ARGV[4])
state.count = old and old.count or 0
state.last = old and old.last or nil
local nextAt = tonumber(ARGV[7])
if nextAt and (state.limit == nil or state.count < state.limit) then
  state.next = nextAt
end
local text = cjson.encode(state)
redis.call('HSET', schedulesKey, stateField, text, 'h:' .. id, ARGV[5], 't:' .. id, ARGV[6])
if state.next then
  addOccurrence(id, state.next, unit, tonumber(ARGV[8]))
end
return text
