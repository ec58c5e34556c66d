-- cancel.lua: remove a message that has not started.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] id
-- ARGV[2] events flag ('1' on: events.lua)
-- ARGV[3] (flows, optional) '' checks a flow child's parent; 'force': the caller found that
--   the parent (in another slot) no longer waits; 'cascade': the parent is being cancelled
-- ARGV[4] ('cascade' only) that parent, "<group>:<id>": a message whose record names another
--   parent (or none) is not its child and stays (a stranger holding an id the flow listed)
-- Returns 1 when it was delayed, ready or waiting (a flow parent) and is gone now (2: a flow
-- child whose outcome now waits in this slot's outbox for its parent elsewhere: the caller
-- relays it); 0 when it was not found, is being handled (active) or is a dead letter (see
-- dead-purge.lua).
-- A flow parent's pending children in this slot go with it (flow-lib.lua): then
-- { 1, "<group>:<id>", "<parent group>:<parent id>"... } names those in other slots, each with
-- its parent, for the caller to cancel with 'cascade'.
-- A mandatory child of a waiting parent stays: { 'refused', parent group, parent id }, or,
-- when that parent is in another slot, { 'ask', parent group, parent id } (the caller reads
-- whether it waits, and calls again with 'force' when it does not).
argCount(2, 4)
argEvents(2)
local mode = ARGV[3] and argOneOf(3, 'flow mode', { '', 'force', 'cascade' }) or ''
if (mode == 'cascade') ~= (ARGV[4] ~= nil) or (ARGV[4] and not string.match(ARGV[4], '^%d+:.')) then
  refuse(4, "a cascade's parent must be '<group>:<id>', given with 'cascade' only")
end
local id = ARGV[1] -- any bytes: a raw member's id is the member
-- The record's tags tell a flow child (a raw member not leased yet has no record); only a
-- record with tags has the flow library built (flow-lib.lua: it costs a few µs).
local rec = redis.call('HGET', msgKey, id)
local ref = rec and string.find(rec, '^[^|]*|[^|]*|[^|]*|[^|]*|[npfc]%d') and flow().tagsOf(rec)
if ref and mode == '' then
  local refusal = cancelRefusal(ref)
  if refusal then
    return refusal
  end
end
if mode == 'cascade' then
  local parentGroup, parent = string.match(ARGV[4], '^(%d+):(.+)$')
  if not childOf(id, tonumber(parentGroup), parent) then
    return 0
  end
end
local was = unqueue(id) -- cancel-lib.lua: the delayed, ready or waiting set
if not was then
  return 0
end
setEvents(ARGV[2])
-- Always published (waitFor's waiters are told at once); the name only with events on.
publish('cancelled', { id }, eventsOn and { nameOf(rec) } or nil, '')
-- A kept done entry of this id told of a run before this one (another program ZADDed a
-- finished member again): it goes too, or get() would read the id as done.
dropHistory({ id })
local elsewhere = {}
if was == 'waiting' then
  cancelChildren(id, elsewhere)
  flow().forget({ id })
end
local done = 1
if ref and mode ~= 'cascade' then
  flow().report(id, ref, 'c', nowMs()) -- an optional child: its parent goes on without it
  if flow().parseRef(ref) ~= flow().group() then
    done = 2 -- its outcome waits in the outbox: the caller relays it
  end
end
forget({ id })
if #elsewhere == 0 then
  return done
end
table.insert(elsewhere, 1, done)
return elsewhere
