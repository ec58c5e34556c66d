-- cancel.lua: remove a message that has not started.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] id
-- ARGV[2] events flag ('1' on: events.lua)
-- Returns 1 when it was delayed or ready and is gone now; 0 when it was not
-- found, is being handled (active) or is a dead letter (see dead-purge.lua).
argCount(2)
argEvents(2)
local id = ARGV[1] -- any bytes: a raw member's id is the member
if redis.call('ZREM', delayedKey, id) == 0 then
  local due = redis.call('HGET', dueKey, id)
  -- Active leases carry a token after a '/': those are being handled.
  if not due or string.find(due, '/', 1, true) then
    return 0
  end
  if redis.call('ZREM', readyKey, readyMember(tonumber(due), id)) == 0 then
    return 0
  end
end
setEvents(ARGV[2])
-- Always published (waitFor's waiters are told at once); the name only with events on,
-- since it costs a read of the record.
publish('cancelled', { id }, eventsOn and { nameOf(redis.call('HGET', msgKey, id)) } or nil, '')
-- A kept done entry of this id told of a run before this one (another program ZADDed a
-- finished member again): it goes too, or get() would read the id as done.
dropHistory({ id })
forget({ id })
return 1
