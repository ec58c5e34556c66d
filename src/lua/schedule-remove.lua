-- schedule-remove.lua: remove a schedule and its waiting occurrence (a leased one runs
-- to its end; its consumer finds the schedule gone and adds no next one).
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] schedule id
-- Returns 1 when the schedule was there.
argCount(1)
local id = argText(1, 'schedule id')
local text = redis.call('HGET', schedulesKey, 's:' .. id)
if not text then
  return 0
end
local state = cjson.decode(text)
if state.next then
  cancelWaiting(occurrenceId(id, state.next))
end
redis.call('HDEL', schedulesKey, 's:' .. id, 'h:' .. id, 't:' .. id)
return 1
