-- dedupe.lua: dedupe windows of caller ids (add(body, { id, dedupeMs })). The loader puts
-- this text after lib.lua, events.lua and history.lua, in front of each group script.
-- Windows zset `{prefix:g}:dedupe` (KEYS[25]): caller id → when its window ends (ms,
-- Redis clock). No key has a TTL: an add trims at most its batch plus WINDOW_SLACK
-- windows that ended, from the oldest, so the set holds the open windows and a few more.
local dedupeKey = KEYS[25]
local WINDOW_SLACK = 10

-- For each caller id: true while its window is open.
local function openWindows(ids)
  local open = {}
  if redis.call('EXISTS', dedupeKey) == 0 then
    return open
  end
  local ends, now = bulkRead('ZMSCORE', dedupeKey, ids), nowMs()
  for i = 1, #ids do
    open[i] = ends[i] ~= false and tonumber(ends[i]) > now
  end
  return open
end

-- Open the windows of the caller ids just stored (records: id, record pairs), and drop a
-- few that ended.
local function openNewWindows(records, windows, nCallers)
  local now, ends = nil, {}
  if nCallers > 0 then
    for i = 1, #records, 2 do
      local ms = windows[records[i]]
      if ms then
        now = now or nowMs()
        ends[#ends + 1] = now + ms
        ends[#ends + 1] = records[i]
      end
    end
  end
  if #ends > 0 then
    bulk('ZADD', dedupeKey, ends)
  elseif redis.call('EXISTS', dedupeKey) == 0 then
    return
  end
  local ended = redis.call('ZRANGEBYSCORE', dedupeKey, '-inf', now or nowMs(), 'LIMIT', 0,
    #records / 2 + WINDOW_SLACK)
  if #ended > 0 then
    bulk('ZREM', dedupeKey, ended)
  end
end

-- When the window of this id ends (ms), or false when none is open.
local function windowOf(id)
  local ends = redis.call('ZSCORE', dedupeKey, id)
  if ends and tonumber(ends) > nowMs() then
    return ends
  end
  return false
end
