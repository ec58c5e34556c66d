-- lib-ids.lua: lib.lua's helpers for sets of message ids: which are members, what
-- to forget of them, which leases a caller still holds, which dead letters a call
-- names, and a fresh generated id. The loader puts it right after lib.lua (whose
-- locals it uses) in front of each group script.

-- Keep only the ids that are members of a sorted set.
local function membersOf(key, ids)
  local scores = bulkRead('ZMSCORE', key, ids)
  local found = {}
  for i = 1, #ids do
    if scores[i] then
      found[#found + 1] = ids[i]
    end
  end
  return found
end

-- The big hash's sizes of these ids, and the body keys of the spilled ones. Big
-- records are rare; spilled ones ("<bytes>/<nonce>") have a body key to delete.
local function dropBigs(ids)
  if redis.call('EXISTS', bigKey) == 0 then
    return
  end
  local sizes, bodies = bulkRead('HMGET', bigKey, ids), {}
  for i = 1, #ids do
    local nonce = sizes[i] and string.match(sizes[i], '/(.*)')
    if nonce then
      bodies[#bodies + 1] = bodyKey(nonce)
    end
  end
  for i = 1, #bodies, CHUNK do
    redis.call('DEL', unpack(bodies, i, math.min(i + CHUNK - 1, #bodies)))
  end
  bulk('HDEL', bigKey, ids)
end

-- Priorities, attempts and failures of these ids: rare, so hashes that do not
-- exist are skipped.
local function forgetRare(ids)
  for _, key in ipairs({ priKey, attKey, errKey, reasonKey }) do
    if redis.call('EXISTS', key) == 1 then
      bulk('HDEL', key, ids)
    end
  end
end

-- A job's log lines (report.lua): a list beside the progress hash, `{prefix:g}:log:<id>`.
local function logKey(id)
  return string.sub(progressKey, 1, -9) .. 'log:' .. id
end

-- Progress and log lines of these ids (report.lua). Most groups have none (no hash: one
-- HLEN). Otherwise the cheaper side is read: the reporters' ids when they are fewer than
-- the ids forgotten, else the ids' fields; a job that never reported costs no more.
local function forgetReports(ids)
  local reporters = redis.call('HLEN', progressKey)
  if reporters == 0 then
    return
  end
  local found = {}
  if reporters <= #ids then
    local wanted = {}
    for i = 1, #ids do
      wanted[ids[i]] = true
    end
    for _, id in ipairs(redis.call('HKEYS', progressKey)) do
      if wanted[id] then
        found[#found + 1] = id
      end
    end
  else
    local values = bulkRead('HMGET', progressKey, ids)
    for i = 1, #ids do
      if values[i] then
        found[#found + 1] = ids[i]
      end
    end
  end
  if #found == 0 then
    return
  end
  bulk('HDEL', progressKey, found)
  local lists = {}
  for i = 1, #found do
    lists[i] = logKey(found[i])
  end
  for i = 1, #lists, CHUNK do
    redis.call('DEL', unpack(lists, i, math.min(i + CHUNK - 1, #lists)))
  end
end

-- Forget everything stored for these ids except set memberships. `unleased`: the
-- caller knows none of them has a lease entry (its HDEL would only look them up).
local function forget(ids, unleased)
  -- Never the placeholder field, which a raw member may be named like (see claim.lua).
  for i = 1, #ids do
    if ids[i] == KEEP_FIELD then
      local rest = {}
      for j = 1, #ids do
        if j ~= i then
          rest[#rest + 1] = ids[j]
        end
      end
      ids = rest
      break
    end
  end
  if #ids == 0 then
    return
  end
  bulk('HDEL', msgKey, ids)
  if not unleased then
    bulk('HDEL', dueKey, ids)
  end
  dropBigs(ids)
  if redis.call('EXISTS', preKey) == 1 then
    bulk('HDEL', preKey, ids)
  end
  -- Renamed ids exist only after an id counter went back: forget both directions.
  if redis.call('EXISTS', renamedKey) == 1 then
    local back = {}
    for i = 1, #ids do
      back[i] = '>' .. ids[i]
    end
    local firsts, gone = bulkRead('HMGET', renamedKey, back), {}
    for i = 1, #ids do
      if firsts[i] then
        gone[#gone + 1] = back[i]
        if redis.call('HGET', renamedKey, firsts[i]) == ids[i] then
          gone[#gone + 1] = firsts[i]
        end
      end
    end
    if #gone > 0 then
      bulk('HDEL', renamedKey, gone)
    end
  end
  forgetRare(ids)
  forgetReports(ids)
end

-- Leases named from ARGV[first..last] (last: the end of ARGV when nil): groups
-- of token, count, ids. Returns the ids whose lease that token still holds, the
-- stale rest, (when `withDues`) the held ones' due ms (as text when withDues is
-- 'text'), and the held ones' positions among all the ids named (history.lua
-- pairs each with its result).
local function leasedBy(first, withDues, last)
  local held, dues, stale, positions = {}, {}, {}, {}
  local i, position = first, 0
  last = last or #ARGV
  while i <= last do
    local suffix, count = '/' .. ARGV[i], tonumber(ARGV[i + 1])
    local ids = {}
    for j = i + 2, i + 1 + count do
      ids[#ids + 1] = ARGV[j]
    end
    i = i + 2 + count
    local values = bulkRead('HMGET', dueKey, ids)
    for j = 1, #ids do
      local value = values[j]
      position = position + 1
      -- The value ends with '/' .. token: a plain find from there makes no substring.
      if value and string.find(value, suffix, #value - #suffix + 1, true) then
        held[#held + 1] = ids[j]
        positions[#positions + 1] = position
        if withDues == 'text' then
          dues[#dues + 1] = dueTextOf(value)
        elseif withDues then
          dues[#dues + 1] = dueOf(value)
        end
      else
        stale[#stale + 1] = ids[j]
      end
    end
  end
  return held, stale, dues, positions
end

-- Dead letters named by a call: ARGV[1] '*' for the oldest ARGV[2], or 'ids' with ARGV[2..].
local function selectDead()
  if ARGV[1] == '*' then
    return redis.call('ZRANGE', deadKey, 0, tonumber(ARGV[2]) - 1)
  end
  return membersOf(deadKey, argvFrom(2))
end

-- What dead-retry and dead-purge answer: a count for '*', the ids acted on for 'ids'.
local function deadReply(ids)
  if ARGV[1] == '*' then
    return #ids
  end
  return ids
end

-- A fresh generated id, when one a producer chose exists already: its counter
-- went back (an older AOF, a failover to a lagging replica). The counter jumps
-- further on each taken id, past however much was handed out twice. Rare.
local DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'
local function isTaken(id)
  return redis.call('ZSCORE', delayedKey, id) or redis.call('HEXISTS', dueKey, id) == 1
    or redis.call('ZSCORE', deadKey, id) or redis.call('HEXISTS', msgKey, id) == 1
end
local function freshId()
  local group = string.match(delayedKey, ':(%d+)$')
  local step = 1
  while true do
    local n = redis.call('INCRBY', seqKey, step)
    local digits = ''
    repeat
      local d = n % 36
      digits = string.sub(DIGITS, d + 1, d + 1) .. digits
      n = (n - d) / 36
    until n == 0
    local id = group .. ':' .. string.char(96 + #digits) .. digits
    if not isTaken(id) then
      return id
    end
    step = step * 2
  end
end
