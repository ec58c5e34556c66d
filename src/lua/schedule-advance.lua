-- schedule-advance.lua: a consumer got occurrence `at` of a schedule: count it and add the
-- next one, in the same call. Only the first consumer of that occurrence under that spec
-- does anything (compare and set on state.next): a second delivery of it, or a spec an
-- upsert replaced meanwhile, changes nothing. No leader: whoever runs an occurrence
-- materialises the next, and an occurrence whose consumer died is delivered again.
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] unit; ARGV[2] schedule id; ARGV[3] the occurrence's grid ms
-- ARGV[4] the digest the consumer computed the next time under
-- ARGV[5] next occurrence's grid ms ('' = none: the schedule ends)
-- ARGV[6] the occurrences' priority
-- ARGV[7] 'orphan' for a repair (src/runtime/schedule-repair.ts): advance only when the
--   occurrence is no longer waiting or leased (a dead letter by lease expiry before it
--   started, a cancel), which no consumer will ever advance from; else absent
-- Returns { 'advanced' | 'stale' | 'gone' | 'pending', state JSON or '' }
argCount(6, 7)
local unit, id, at = argUnit(1), argText(2, 'schedule id'), argInt(3, "the occurrence's grid ms", 0)
argText(4, 'digest')
argOptionalInt(5, "next occurrence's grid ms", 0)
argInt(6, "the occurrences' priority", 0, 1000000)
if #ARGV == 7 then
  argOneOf(7, 'repair mode', { 'orphan' })
end
local stateField = 's:' .. id
local text = redis.call('HGET', schedulesKey, stateField)
if not text then
  return { 'gone', '' }
end
local state = cjson.decode(text)
if state.digest ~= ARGV[4] or state.next ~= at then
  return { 'stale', text }
end
if ARGV[7] == 'orphan' then
  local occ = occurrenceId(id, at)
  if redis.call('ZSCORE', delayedKey, occ) or redis.call('HEXISTS', dueKey, occ) == 1 then
    return { 'pending', text }
  end
end
state.count = (state.count or 0) + 1
state.last = at
state.next = nil
local nextAt = tonumber(ARGV[5])
if nextAt and (state.limit == nil or state.count < state.limit) then
  state.next = nextAt
end
text = cjson.encode(state)
redis.call('HSET', schedulesKey, stateField, text)
if state.next then
  addOccurrence(id, state.next, unit, tonumber(ARGV[6]))
end
return { 'advanced', text }
