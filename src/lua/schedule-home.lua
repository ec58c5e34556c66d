-- schedule-home.lua: where a schedule lives. An id names one schedule in the whole queue; its
-- home group (the hash of the id, src/queue/schedules/placement.ts) keeps a marker naming the
-- group its state and pending occurrence live in, with a generation that the state is written
-- under (schedule-upsert.lua) and that a remove fences (schedule-remove.lua).
-- Schedules hash of the home group (schedule-lib.lua):
--   g:<id> the marker, '<group>:<generation>'; gen the last generation given out
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] 'claim' | 'read' | 'release'; ARGV[2] schedule id
-- ARGV[3] claim: the group a new schedule goes to; release: the marker to release (it goes
--   only while it is still the id's marker)
-- Returns claim: { marker, 'new' | 'held' }; read: the marker or ''; release: 1 | 0.
argCount(2, 3)
local mode = argOneOf(1, 'mode', { 'claim', 'read', 'release' })
local id = argText(2, 'schedule id')
if mode == 'claim' then
  argCount(3)
  argInt(3, 'group', 0, 1000000)
elseif mode == 'release' then
  argCount(3)
  if not string.match(ARGV[3], '^%d+:%d+$') then
    refuse(3, 'the marker must be <group>:<generation>')
  end
else
  argCount(2)
end
local field = 'g:' .. id
local marker = redis.call('HGET', schedulesKey, field)
if mode == 'read' then
  return marker or ''
elseif mode == 'release' then
  if marker ~= ARGV[3] then
    return 0
  end
  redis.call('HDEL', schedulesKey, field)
  return 1
end
if marker then
  return { marker, 'held' }
end
local gen = redis.call('HINCRBY', schedulesKey, 'gen', 1)
marker = ARGV[3] .. ':' .. gen
redis.call('HSET', schedulesKey, field, marker)
return { marker, 'new' }
