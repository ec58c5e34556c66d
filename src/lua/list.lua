-- list.lua (read only): one group's part of a page of messages in one state,
-- for queue.list (src/queue/browse/). Each state is read in its sorted set's
-- own order (score, then member bytes), from a position: finding it costs
-- O(log n) (O(log² n) when the cursor's member has left), whatever the depth.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] state: delayed | ready | active | done | dead | waiting
--   delayed: the delayed set's entries not due yet; ready: the ready set
--   (phase 0, by priority, then due time, then id), then the due entries
--   waiting in the delayed set (phase 1, by due time, then id); active: by
--   lease expiry; done: by finish time (kept history; older than ARGV[7] ms
--   counts as gone, as inspect.lua has it; an id pending again is left out); dead: by
--   time of death; waiting: flow parents waiting for their children, by time added
-- ARGV[3] count: most items returned (at most ITEMS)
-- ARGV[4] scan budget: most entries looked at (at most SCAN); with a prefix
--   most may not match, so a call can return fewer than count and say where
--   it stopped
-- ARGV[5] id prefix ('' for every id)
-- ARGV[6] preview bytes: each record is cut to its header, tags and kind, and that many
--   bytes of body (a stub stays whole); a long record's kept preview is read instead of
--   the record when it holds that many (previews.lua), so a page costs what its limit
--   costs whatever the bodies weigh
-- ARGV[7] done: the kept history's age limit in ms (0 none)
-- ARGV[8] start and direction: 'first' (oldest first: from the first entry) or
--   'after' a cursor; 'last' (newest first: phases and entries in reverse, from
--   the last entry) or 'before' a cursor. With a cursor, ARGV[9] is its phase,
--   ARGV[10] how this group sorts against the cursor's in the page's order ('<'
--   before, '=' it, '>' after), ARGV[11] its score (as Redis wrote it) and
--   ARGV[12] its member: the call starts past that position (a group before the
--   cursor's starts past its score, one after at its score)
-- Returns { exhausted (1: nothing left after the last entry looked at),
--   lastPhase, lastScore, lastMember (false when nothing was looked at),
--   then per item: phase, member, score, record, failedAttempts, extra,
--   recordBytes } where extra is the due hash value (active), the history
--   entry (done), the reason (dead), else false.
local ITEMS, SCAN = 500, 5000
argCount(8, 12)
argUnit(1)
argOneOf(2, 'state', { 'delayed', 'ready', 'active', 'done', 'dead', 'waiting' })
argInt(3, 'count', 1)
argInt(4, 'scan budget', 1)
argInt(6, 'preview bytes', 0)
argInt(7, "the kept history's age limit in ms", 0)
local start = argOneOf(8, 'start', { 'first', 'after', 'last', 'before' })
if start == 'first' or start == 'last' then
  argCount(8)
else
  argCount(12)
  argInt(9, "the cursor's phase", 0, 1)
  argOneOf(10, "this group's side of the cursor", { '<', '=', '>' })
  argNumber(11, "the cursor's score")
end
local unit, state = tonumber(ARGV[1]), ARGV[2]
local count = math.min(tonumber(ARGV[3]), ITEMS)
local budget = math.min(math.max(tonumber(ARGV[4]), count), SCAN)
local prefix, previewBytes = ARGV[5], tonumber(ARGV[6])
local after = start == 'after' or start == 'before'
local newest = start == 'last' or start == 'before'
local now = nowMs()

-- Byte order, as Redis orders members of equal score (Lua's < follows the locale).
local function bytesLess(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- Among the members of `score` in key (ranks [lo, hi): they sort by bytes), the
-- first rank whose member sorts after `member`, which is not in key (log n reads of
-- one entry each).
local function firstAfter(key, member, lo, hi)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZRANGE', key, mid, mid)[1]
    if bytesLess(member, at) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

-- Oldest first: the first rank past (score, member) in key.
local function rankAfter(key, side, score, member)
  if side == '<' then
    return redis.call('ZCOUNT', key, '-inf', score)
  end
  local before = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  if side == '>' then
    return before
  end
  local held = redis.call('ZSCORE', key, member)
  if held and tonumber(held) == tonumber(score) then
    return redis.call('ZRANK', key, member) + 1
  end
  return firstAfter(key, member, before, redis.call('ZCOUNT', key, '-inf', score))
end

-- Newest first: the end (exclusive) of the ranks past (score, member) in key, which
-- are read downwards from it.
local function rankBefore(key, side, score, member)
  local below = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  if side == '<' then
    return below
  end
  local upTo = redis.call('ZCOUNT', key, '-inf', score)
  if side == '>' then
    return upTo
  end
  local held = redis.call('ZSCORE', key, member)
  if held and tonumber(held) == tonumber(score) then
    return redis.call('ZRANK', key, member)
  end
  return firstAfter(key, member, below, upTo)
end

-- The phases of the state: { key, first rank, end rank (exclusive) }.
local dueNow = nowMs() / unit
local function dueCount()
  return redis.call('ZCOUNT', delayedKey, '-inf', dueNow)
end
local phases
if state == 'delayed' then
  phases = { { delayedKey, dueCount(), redis.call('ZCARD', delayedKey) } }
elseif state == 'ready' then
  phases = { { readyKey, 0, redis.call('ZCARD', readyKey) }, { delayedKey, 0, dueCount() } }
elseif state == 'active' then
  phases = { { activeKey, 0, activeCount() } } -- its placeholder is last: left out
elseif state == 'done' then
  local ageMs = tonumber(ARGV[7]) or 0
  local first = ageMs > 0 and redis.call('ZCOUNT', doneKey, '-inf', '(' .. (now - ageMs)) or 0
  phases = { { doneKey, first, redis.call('ZCARD', doneKey) } }
elseif state == 'dead' then
  phases = { { deadKey, 0, redis.call('ZCARD', deadKey) } }
elseif state == 'waiting' then
  phases = { { waitingKey, 0, redis.call('ZCARD', waitingKey) } } -- flow parents, by add time
else
  return redis.error_reply('ERR skyq list: unknown state ' .. tostring(state))
end

local big = redis.call('EXISTS', bigKey) == 1
local out = { 0, false, false, false }
local items, looked = 0, 0
local cursorPhase = after and tonumber(ARGV[9]) or -1

-- One entry looked at: the page's frontier moves to it, and it is an item unless
-- the prefix leaves it out.
local function visit(phase, key, member, score)
  local id = (key == readyKey) and string.sub(member, 12) or member
  looked = looked + 1
  out[2], out[3], out[4] = phase, score, member
  -- A done entry whose id is pending again told of its previous run (history.lua).
  local rerun = state == 'done'
    and (redis.call('ZSCORE', delayedKey, id) or redis.call('HEXISTS', dueKey, id) == 1)
  if rerun or (prefix ~= '' and string.sub(id, 1, #prefix) ~= prefix) then
    return
  end
  items = items + 1
  local rec, full = previewRead(id, previewBytes)
  -- A spilled record is a stub here, read after by the client: count its real bytes.
  local spilled = big and tonumber(string.match(redis.call('HGET', bigKey, id) or '', '^(%d+)/'))
  full = spilled or full
  local extra = false
  if state == 'active' then
    extra = redis.call('HGET', dueKey, id) or false
  elseif state == 'done' then
    extra = redis.call('HGET', histKey, id) or false
  elseif state == 'dead' then
    extra = redis.call('HGET', reasonKey, id) or false
  end
  out[#out + 1] = phase
  out[#out + 1] = member
  out[#out + 1] = score
  out[#out + 1] = rec
  out[#out + 1] = redis.call('HGET', attKey, id) or '0'
  out[#out + 1] = extra
  out[#out + 1] = full
end

-- Reads ranks [rank, last) of one phase upwards; false when it stopped early.
local function readUp(phase, key, rank, last)
  if cursorPhase == phase then
    rank = math.max(rank, rankAfter(key, ARGV[10], ARGV[11], ARGV[12]))
  elseif cursorPhase > phase then
    return true -- this phase was read before the cursor's
  end
  while rank < last do
    if items >= count or looked >= budget then
      return false
    end
    local chunk = math.min(last - rank, budget - looked, 200)
    local entries = redis.call('ZRANGE', key, rank, rank + chunk - 1, 'WITHSCORES')
    if #entries == 0 then
      break
    end
    local i = 1
    while i <= #entries and items < count do
      visit(phase, key, entries[i], entries[i + 1])
      rank, i = rank + 1, i + 2
    end
  end
  return true
end

-- Reads ranks [first, top) of one phase downwards; false when it stopped early.
local function readDown(phase, key, first, top)
  if cursorPhase == phase then
    top = math.min(top, rankBefore(key, ARGV[10], ARGV[11], ARGV[12]))
  elseif after and cursorPhase < phase then
    return true -- this phase was read before the cursor's
  end
  while top > first do
    if items >= count or looked >= budget then
      return false
    end
    local chunk = math.min(top - first, budget - looked, 200)
    local entries = redis.call('ZRANGE', key, top - chunk, top - 1, 'WITHSCORES')
    if #entries == 0 then
      break
    end
    local i = #entries - 1
    while i >= 1 and items < count do
      visit(phase, key, entries[i], entries[i + 1])
      top, i = top - 1, i - 2
    end
  end
  return true
end

local exhausted = true
for step = 1, #phases do
  local phase = newest and #phases - step or step - 1
  local key, first, last = phases[phase + 1][1], phases[phase + 1][2], phases[phase + 1][3]
  if newest then
    exhausted = readDown(phase, key, first, last)
  else
    exhausted = readUp(phase, key, first, last)
  end
  if not exhausted then
    break
  end
end
out[1] = exhausted and 1 or 0
return out
