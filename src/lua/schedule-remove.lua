-- schedule-remove.lua: remove a schedule and its waiting occurrence (a leased one runs to its
-- end; its consumer finds the schedule gone and adds no next one), and fence its generation:
-- an upsert placed under it or an earlier one writes nothing here any more (a tombstone,
-- x:<id>), so one that was on its way when the id's marker was released cannot make a second
-- schedule (src/queue/schedules/placement.ts).
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] schedule id
-- ARGV[2] the generation it was placed under (schedule-home.lua): the state goes when it was
--   written under that one or an earlier one; '' = a copy from before placements (format 7),
--   which goes only when it has no generation
-- ARGV[3] 'fence' to fence a placement whose writer never wrote (it died, or is late): only
--   when no schedule of the id is here; else absent
-- Returns 1 when a schedule was removed (fence: when the generation was fenced), else 0.
argCount(2, 3)
local id = argText(1, 'schedule id')
local gen = argOptionalInt(2, 'generation', 1)
local fence = #ARGV == 3 and argOneOf(3, 'mode', { 'fence' })
if fence and not gen then
  refuse(2, 'a fence needs the generation')
end
local stateField, tombField = 's:' .. id, 'x:' .. id
local text = redis.call('HGET', schedulesKey, stateField)
if fence and text then
  return 0
end
if gen then
  local tomb = tonumber(redis.call('HGET', schedulesKey, tombField) or '0')
  if gen > tomb then
    redis.call('HSET', schedulesKey, tombField, gen)
  end
end
if fence then
  return 1
end
if not text then
  return 0
end
local state = cjson.decode(text)
if (gen == nil and state.gen ~= nil) or (gen ~= nil and (state.gen or 0) > gen) then
  return 0
end
if state.next then
  cancelWaiting(occurrenceId(id, state.next))
end
redis.call('HDEL', schedulesKey, stateField, 'h:' .. id, 't:' .. id)
return 1
