-- dead-list.lua (read only): a page of dead letters, oldest first (by time of
-- death, then id: the dead set's own order) or newest first (its reverse).
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] count; ARGV[2] byte budget: a page stops early once its ids and
--   records pass it (at least one entry), or at 500 entries, so neither big
--   bodies nor a big count can stall Redis (the caller asks again)
-- ARGV[3] what to read: 'ids' for the ids and times of death only (a page over several
--   groups reads those first, then the rows it shows: src/queue/dead-letters.ts); else
--   preview bytes, 0 for whole records; else each record is cut to its header, tags and
--   kind, and that many bytes of body, read from its kept preview when it has one
--   (previews.lua; a stub stays whole: the client reads that much of its body key)
-- ARGV[4] where the page starts, oldest first: 'rank' with ARGV[5] the rank (one
--   group's offset), or 'after' with ARGV[5] a time of death (ms), ARGV[6] how
--   this group sorts against the cursor's in the page's order ('<' before, '='
--   it, '>' after) and ARGV[7] the cursor's id: the page starts past that letter.
--   Newest first: 'revrank' (an offset from the newest) or 'before' (a cursor),
--   with the same arguments. Finding the start costs O(log n) whatever the offset.
-- Returns { id, diedAtMs, record, reason, lastError (its message), failedAttempts,
--   recordBytes, ... }, or with 'ids' { id, diedAtMs, ... }
local ENTRIES = 500 -- most entries a call reads, however small: each costs five lookups
argCount(5, 7)
local count = math.min(argInt(1, 'count', 1), ENTRIES)
local budget = argInt(2, 'byte budget', 1, 1024 * 1024 * 1024)
local idsOnly = ARGV[3] == 'ids'
local previewBytes = idsOnly and 0 or argInt(3, "preview bytes (or 'ids')", 0)
local start = argOneOf(4, 'where the page starts', { 'rank', 'after', 'revrank', 'before' })
local newest = start == 'revrank' or start == 'before'
if start == 'rank' or start == 'revrank' then
  argCount(5)
  argInt(5, 'rank', 0)
else
  argCount(7)
  argNumber(5, 'time of death in ms')
  argOneOf(6, "this group's side of the cursor", { '<', '=', '>' })
  argText(7, "the cursor's id")
end
-- Oldest first: the rank the page starts at. Newest first: the end (exclusive) of
-- the ranks it reads, downwards.
local function startRank()
  if start == 'rank' then
    return tonumber(ARGV[5])
  end
  if start == 'revrank' then
    return math.max(redis.call('ZCARD', deadKey) - tonumber(ARGV[5]), 0)
  end
  local at, side, id = ARGV[5], ARGV[6], ARGV[7]
  -- The letters of that very time a group before the cursor's showed already: oldest
  -- first those are below the cursor, newest first above it.
  if side == '<' then
    return redis.call('ZCOUNT', deadKey, '-inf', newest and ('(' .. at) or at)
  end
  local before = redis.call('ZCOUNT', deadKey, '-inf', '(' .. at)
  if side == '>' then
    return newest and redis.call('ZCOUNT', deadKey, '-inf', at) or before
  end
  local score = redis.call('ZSCORE', deadKey, id)
  if score and tonumber(score) == tonumber(at) then
    return redis.call('ZRANK', deadKey, id) + (newest and 0 or 1)
  end
  -- The cursor's letter left meanwhile: the ones of its time that sort before its id
  -- (a run of letters of one ms, read at most a page of them) are below it.
  local same = redis.call('ZRANGEBYSCORE', deadKey, at, at, 'LIMIT', 0, ENTRIES)
  for i = 1, #same do
    if same[i] > id then
      break
    end
    before = before + 1
  end
  return before
end

local page
if newest then
  local top = startRank()
  page = {}
  if top > 0 then
    local rows = redis.call('ZRANGE', deadKey, math.max(top - count, 0), top - 1, 'WITHSCORES')
    for i = #rows - 1, 1, -2 do
      page[#page + 1] = rows[i]
      page[#page + 1] = rows[i + 1]
    end
  end
else
  local first = startRank()
  page = redis.call('ZRANGE', deadKey, first, first + count - 1, 'WITHSCORES')
end
if idsOnly then
  return page
end
local bytes = 0
-- A spilled record is a stub here, read after by the client: count its real bytes.
local big = redis.call('EXISTS', bigKey) == 1
local out = {}
for i = 1, #page, 2 do
  if bytes > budget then
    break
  end
  local id = page[i]
  local rec, full
  if previewBytes > 0 then
    rec, full = previewRead(id, previewBytes)
  else
    -- A member named like the placeholder field has no record: its name is its body.
    rec = id ~= KEEP_FIELD and redis.call('HGET', msgKey, id) or false
    full = rec and #rec or 0
  end
  local spilled = big and tonumber(string.match(redis.call('HGET', bigKey, id) or '', '^(%d+)/'))
  full = spilled or full
  bytes = bytes + #id + (previewBytes > 0 and math.min(full, previewBytes) or full)
  out[#out + 1] = id
  out[#out + 1] = page[i + 1]
  out[#out + 1] = rec
  out[#out + 1] = redis.call('HGET', reasonKey, id) or false
  -- The last error's message; its stack (after 0xff, fail.lua) is for get() alone.
  local err = redis.call('HGET', errKey, id)
  local mark = err and string.find(err, '\255', 1, true)
  out[#out + 1] = (mark and string.sub(err, 1, mark - 1)) or err or false
  out[#out + 1] = redis.call('HGET', attKey, id) or '0'
  out[#out + 1] = full
end
return out
