-- events.lua: the group's event stream, read by queue.events() and queue.waitFor()
-- (src/queue/events/). The loader puts this text after lib.lua and lib-ids.lua, and
-- before history.lua, in front of each group script.
--
-- Stream `{prefix:g}:fin` (KEYS[23]): one entry per call and type of event, with
-- at most EVENTS_PER_ENTRY events, and about EVENT_ENTRIES entries kept (MAXLEN ~):
--   EVENT_MARK → type, META_MARK → meta, then id → name ('' when it has none)
-- The entry's stream id is when it happened (Redis clock). meta, by type:
--   failed "<next due ms>|<failed attempts>|<error>", rescheduled "<due ms>",
--   dead the reason, stale "lease expired", progress the values as one JSON array (one
--   per id, in order: report.lua); '' for the others.
-- done, dead, cancelled and progress are always written (waitFor needs them: a waiter is
-- told of each end at once, and of progress as it comes); added, started, failed,
-- rescheduled and stale only when the caller has events on (setEvents). With events off
-- no record is read for a name ('' then).
-- Format-4 entries (before events) hold id → done | dead pairs only: readers take both.

local EVENT_MARK, META_MARK = '\255e', '\255m'
local EVENTS_PER_ENTRY = 100
local EVENT_ENTRIES = 1000
local eventsOn = false

-- A script's events flag from its arguments: '1' on, anything else off.
local function setEvents(flag)
  eventsOn = flag == '1'
end

-- The name tag of a record (`n<bytes>:<name>` after the fourth bar), '' when none.
-- The match stops at the header: the body is never scanned.
local function nameOf(rec)
  if not rec then
    return ''
  end
  local bytes, at = string.match(rec, '^[^|]*|[^|]*|[^|]*|[^|]*|n(%d+):()')
  if not bytes then
    return ''
  end
  return string.sub(rec, at, at + tonumber(bytes) - 1)
end

-- The events written whatever the events flag says.
local ALWAYS = { done = true, dead = true, cancelled = true, progress = true }

-- Append events of one type for these ids (names: a list beside them, or nil).
local function publish(kind, ids, names, meta)
  if #ids == 0 or (not eventsOn and not ALWAYS[kind]) then
    return
  end
  for i = 1, #ids, EVENTS_PER_ENTRY do
    local fields = { EVENT_MARK, kind, META_MARK, meta or '' }
    for j = i, math.min(i + EVENTS_PER_ENTRY - 1, #ids) do
      fields[#fields + 1] = ids[j]
      fields[#fields + 1] = names and names[j] or ''
    end
    redis.call('XADD', finKey, 'MAXLEN', '~', EVENT_ENTRIES, '*', unpack(fields))
  end
end
