-- flow-add.lua: add one group's part of a flow (src/queue/flows/add.ts, flow-lib.lua): its
-- parents, which wait for their children, and its leaves, messages tagged with their parent.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] events flag ('1' on: an added event for each node stored, events.lua)
-- ARGV[3] how many nodes follow
-- then 7 per node, each parent before its children: id; 'g' a generated id or 'c' a caller's;
--   score ('' due now, else its delayed-set score); record; priority; parent ref ('' for a
--   root, else "<group>:<o|m>:<parent id>"); children ('' for a leaf; for a parent its
--   children in the order given, as JSON [[group, id, optional 0|1, name or ''], ...])
-- A node whose id already holds this very record is this add sent again (a retry): it is left
-- as it is. A caller id whose message is dead or done (kept) is replaced, as add.lua does.
-- Stores nothing, and says why, when an id is taken by a pending message or by another record
-- (a generated id the counter gave twice): a flow's ids are fixed once its parents are stored.
-- Returns how many nodes it stored.
local kind = redis.call('TYPE', delayedKey)['ok']
if kind ~= 'none' and kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE key ' .. delayedKey .. ' holds a ' .. kind .. ', not a zset')
end

argCount(3, -1)
local unit = argUnit(1)
argEvents(2)
local count = argInt(3, 'count of nodes', 1, 10000)
argCount(3 + count * 7)
local FIRST, STEP = 4, 7
local lists = {} -- ARGV position → its children, decoded once
for i = FIRST, 3 + count * STEP, STEP do
  argText(i, 'node id')
  argOneOf(i + 1, 'id kind', { 'g', 'c' })
  if ARGV[i + 2] ~= '' then
    argNumber(i + 2, "score ('' for due now)")
  end
  argText(i + 3, 'record')
  argInt(i + 4, 'priority', 0, 1000000)
  if ARGV[i + 5] ~= '' and not string.match(ARGV[i + 5], '^%d+:[om]:.') then
    refuse(i + 5, "parent ref must be '<group>:<o|m>:<parent id>' or ''")
  end
  if ARGV[i + 6] ~= '' then
    local ok, list = pcall(cjson.decode, ARGV[i + 6])
    local shaped = ok and type(list) == 'table' and #list > 0
    for _, child in ipairs(shaped and list or {}) do
      shaped = shaped and type(child) == 'table' and type(child[1]) == 'number'
        and type(child[2]) == 'string' and child[2] ~= '' and (child[3] == 0 or child[3] == 1)
    end
    if not shaped then
      refuse(i + 6, "children must be '' or a JSON list of [group, id, optional 0|1, name]")
    end
    lists[i + 6] = list
  end
end

setEvents(ARGV[2])
local ids = {}
for n = 1, count do
  ids[n] = ARGV[FIRST + (n - 1) * STEP]
end

-- Which ids are there already, before any write. A generated id is told by its record alone
-- (every message skyq stores has one); a caller id may be pending, dead or kept.
local stored = bulkRead('HMGET', msgKey, ids)
local callers = {}
for n = 1, count do
  if ARGV[FIRST + (n - 1) * STEP + 1] == 'c' then
    callers[#callers + 1] = n
  end
end
local pending, dead = {}, {}
if #callers > 0 then
  local list = {}
  for k, n in ipairs(callers) do
    list[k] = ids[n]
  end
  local delayed = bulkRead('ZMSCORE', delayedKey, list)
  local due = bulkRead('HMGET', dueKey, list)
  local waiting = bulkRead('ZMSCORE', waitingKey, list)
  local died = bulkRead('ZMSCORE', deadKey, list)
  for k, n in ipairs(callers) do
    pending[n] = delayed[k] or due[k] or waiting[k]
    dead[n] = died[k]
  end
end
local skip, replaced = {}, {}
for n = 1, count do
  local at = FIRST + (n - 1) * STEP
  if stored[n] == ARGV[at + 3] then
    skip[n] = true -- this very add, sent again
  elseif pending[n] then
    return redis.error_reply('ERR skyq: flows.add: id ' .. ids[n] .. ' is taken by a pending message; nothing was added in group '
      .. flow().group())
  elseif stored[n] and ARGV[at + 1] == 'g' then
    return redis.error_reply('ERR skyq: flows.add: generated id ' .. ids[n] .. ' is taken (the id counter went back); nothing was added in group '
      .. flow().group() .. ': add the flow again')
  elseif stored[n] or dead[n] then
    replaced[#replaced + 1] = ids[n] -- a caller id, dead or done: replaced
  end
end

-- A dead or finished caller id goes, with its history entry and flow data.
if #replaced > 0 then
  bulk('ZREM', deadKey, replaced)
  dropHistory(replaced)
  flow().forget(replaced)
  forget(replaced)
end

local now = nowMs()
local nowScore = unit == 1 and string.format('%d', now) or string.format('%.17g', now / unit)
local records, pris, queued, readyIds, readyDues, flowFields, parked = {}, {}, {}, {}, {}, {}, {}
local earliest = nil
for n = 1, count do
  if not skip[n] then
    local at = FIRST + (n - 1) * STEP
    local id, score, priority, children = ids[n], ARGV[at + 2], ARGV[at + 4], ARGV[at + 6]
    records[#records + 1] = id
    records[#records + 1] = ARGV[at + 3]
    if children ~= '' then
      -- A parent: it waits; its flow data (flow-lib.lua) says for what and where it goes then.
      local list = lists[at + 6]
      parked[#parked + 1] = now
      parked[#parked + 1] = id
      for _, pair in ipairs({ { ':n', #list }, { ':c', children }, { ':d', score .. '|' .. priority .. '|' .. unit } }) do
        flowFields[#flowFields + 1] = id .. pair[1]
        flowFields[#flowFields + 1] = pair[2]
      end
      if ARGV[at + 5] ~= '' then
        flowFields[#flowFields + 1] = id .. ':u'
        flowFields[#flowFields + 1] = ARGV[at + 5]
      end
      for _, child in ipairs(list) do
        flowFields[#flowFields + 1] = id .. ':r:' .. child[2]
        flowFields[#flowFields + 1] = ''
      end
    else
      -- A leaf: a message as add.lua stores it.
      if priority ~= '0' then
        pris[#pris + 1] = id
        pris[#pris + 1] = priority
      end
      if score ~= '' then
        queued[#queued + 1] = score
        queued[#queued + 1] = id
        earliest = math.min(earliest or math.huge, tonumber(score) * unit)
      elseif priority ~= '0' then
        readyIds[#readyIds + 1] = id
        readyDues[#readyDues + 1] = now
      else
        queued[#queued + 1] = nowScore
        queued[#queued + 1] = id
        earliest = math.min(earliest or math.huge, now)
      end
    end
  end
end

if #records == 0 then
  return 0
end
fill(msgKey, records)
keepPreviews(records)
local bigs = {}
for i = 2, #records, 2 do
  if #records[i] > BIG_RECORD then
    bigs[#bigs + 1] = records[i - 1]
    bigs[#bigs + 1] = #records[i]
  end
end
if #bigs > 0 then
  fill(bigKey, bigs)
end
if #parked > 0 then
  bulk('ZADD', waitingKey, parked)
  bulk('HSET', flowKey, flowFields)
end
if #pris > 0 then
  fill(priKey, pris)
end
if #readyIds > 0 then
  toReady(readyIds, readyDues)
  wake()
end
if #queued > 0 then
  bulk('ZADD', delayedKey, queued)
  if earliest <= now then
    wake()
  else
    wakeIfEarlier(earliest)
  end
end
if eventsOn then
  local names = {}
  for i = 2, #records, 2 do
    names[#names + 1] = nameOf(records[i])
  end
  local added = {}
  for i = 1, #records, 2 do
    added[#added + 1] = records[i]
  end
  publish('added', added, names, '')
end
return #records / 2
