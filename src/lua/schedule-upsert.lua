-- schedule-upsert.lua: create or change a schedule, and its pending occurrence with it, when
-- its state is still the one the caller planned from (compare and set: a consumer or another
-- upserter that changed it meanwhile makes the caller plan again). The same spec again (any
-- number of upserters at once) changes nothing; a new spec replaces the old one's waiting
-- occurrence (never leaves one beside it), on the grid the caller planned for either case:
-- the old occurrence was waiting (or there was none), or it is leased and runs (the new grid
-- then follows it, and it counts as got: last and count; src/queue/schedules/change.ts). The
-- count of occurrences so far is kept.
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] schedule id; ARGV[3] digest of the spec (and record)
-- ARGV[4] the new state, JSON, without next, last, count, anchor and gen
-- ARGV[5] record head; ARGV[6] record tail (schedule-lib.lua)
-- ARGV[7] the generation the id is placed under here (schedule-home.lua)
-- ARGV[8] the state the caller planned from, as it read it ('' = none)
-- ARGV[9], ARGV[10] the grid's anchor and the next occurrence's grid ms ('' = none) when the
--   old pending occurrence is replaced (it was waiting, or there was none)
-- ARGV[11], ARGV[12] the same when the old occurrence is leased (it runs)
-- ARGV[13] the occurrences' priority
-- Returns { 'same' | 'written', state JSON } or { 'changed' | 'fenced', '' }: the state changed
-- since ARGV[8], or the id's placement under ARGV[7] ended (a remove, or a newer one).
argCount(13)
local unit, id = argUnit(1), argText(2, 'schedule id')
argText(3, 'digest')
if not string.match(ARGV[4], '^{') or not pcall(cjson.decode, ARGV[4]) then
  refuse(4, 'the new state must be a JSON object')
end
local gen = argInt(7, 'generation', 1)
argInt(9, "the grid's anchor", 0)
argOptionalInt(10, "next occurrence's grid ms", 0)
argInt(11, "the grid's anchor", 0)
argOptionalInt(12, "next occurrence's grid ms", 0)
argInt(13, "the occurrences' priority", 0, 1000000)
local stateField = 's:' .. id
local oldText = redis.call('HGET', schedulesKey, stateField)
local old = oldText and cjson.decode(oldText) or nil
if old and old.digest == ARGV[3] then
  return { 'same', oldText }
end
local tomb = tonumber(redis.call('HGET', schedulesKey, 'x:' .. id) or '0')
if gen <= tomb or (old and old.gen and gen < old.gen) then
  return { 'fenced', '' }
end
if (oldText or '') ~= ARGV[8] then
  return { 'changed', '' }
end
local state = cjson.decode(ARGV[4])
state.count = old and old.count or 0
state.last = old and old.last or nil
local plan = 9
if old and old.next and cancelWaiting(occurrenceId(id, old.next)) == 0 then
  -- Leased: a consumer got it and runs it (its advance finds the spec changed), so it counts.
  plan = 11
  state.count = state.count + 1
  state.last = old.next
end
state.anchor = tonumber(ARGV[plan])
state.gen = gen
local nextAt = tonumber(ARGV[plan + 1])
if nextAt and (state.limit == nil or state.count < state.limit) then
  state.next = nextAt
end
local text = cjson.encode(state)
redis.call('HSET', schedulesKey, stateField, text, 'h:' .. id, ARGV[5], 't:' .. id, ARGV[6])
redis.call('HDEL', schedulesKey, 'x:' .. id)
if state.next then
  addOccurrence(id, state.next, unit, tonumber(ARGV[13]))
end
return { 'written', text }
