-- lib-held.lua: messages a per-name rate limit holds back, for claim.lua (the loader puts it
-- in front of claim.lua, and of ratelimit-held.lua, which counts them). The tokens are taken before the claim, in a slot of their own
-- (src/runtime/rate-gate.ts); the claim is told, for each name its caller limits, how many
-- of that name it may lease, and sets the rest aside here.
--
-- A held message waits in the ready set like any ready message (same member: its due ms as
-- 11 hex digits, then its id; the due hash keeps its due time), but in a band of scores of
-- its own name, above every priority: score = band × BAND + priority. A claim leases only
-- below BAND, so a held name never stands in other names' way, and within its band a name
-- keeps the ready set's order: priority, then due time, then id. Cancel, reschedule, get,
-- counts and the job list see a held message as ready, with its own due time.
-- The held hash `{prefix:g}:held` (in the group's slot, beside the big hash) maps each name
-- with a band to the band's number; NEXT_BAND holds the last number given. A name's band is
-- forgotten once a claim finds it empty, and the hash with the last one.
local BAND = 2097152 -- 2^21: above MAX_PRIORITY (10^6, src/queue/options.ts)
local NEXT_BAND = '\255next' -- not valid UTF-8: no job name
local heldKey = string.sub(bigKey, 1, -4) .. 'held'
-- While messages are held, a claim asks for another this soon (a wake token for that time):
-- a launcher that does not limit their name runs them even when nothing else wakes it.
local HELD_RECHECK_MS = 1000

-- Every name with a band: a list of { name, band }, in the hash's order ({} when none).
local function heldBands()
  if redis.call('EXISTS', heldKey) == 0 then
    return {}
  end
  local flat, out = redis.call('HGETALL', heldKey), {}
  for i = 1, #flat, 2 do
    if flat[i] ~= NEXT_BAND then
      out[#out + 1] = { flat[i], tonumber(flat[i + 1]) }
    end
  end
  return out
end

-- The first `count` held messages of a band, in ready order, made ordinary ready messages
-- again (score back to their priority; the member stays). Returns how many.
local function releaseHeld(band, count)
  if count <= 0 then
    return 0
  end
  local low = band * BAND
  local found = redis.call('ZRANGEBYSCORE', readyKey, string.format('%d', low),
    '(' .. string.format('%d', low + BAND), 'WITHSCORES', 'LIMIT', 0, count)
  local scores = {}
  for i = 1, #found, 2 do
    scores[#scores + 1] = tonumber(found[i + 1]) - low
    scores[#scores + 1] = found[i]
  end
  bulk('ZADD', readyKey, scores)
  return #scores / 2
end

-- How many messages of a band wait.
local function heldCount(band)
  local low = band * BAND
  return redis.call('ZCOUNT', readyKey, string.format('%d', low), '(' .. string.format('%d', low + BAND))
end

-- Sets messages aside in their names' bands: ids, their due ms and names, all taken out of
-- the delayed or ready set by the caller. `bands`: name → band, filled in as bands are made.
local function holdBack(bands, ids, dues, names)
  local pris = prioritiesOf(ids)
  local members, fields = {}, {}
  for i = 1, #ids do
    local name = names[i]
    if not bands[name] then
      bands[name] = redis.call('HINCRBY', heldKey, NEXT_BAND, 1)
      redis.call('HSET', heldKey, name, bands[name])
    end
    local due = tonumber(dues[i])
    members[#members + 1] = bands[name] * BAND + (pris and tonumber(pris[i]) or 0)
    members[#members + 1] = readyMember(due, ids[i])
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = due
  end
  bulk('ZADD', readyKey, members)
  fill(dueKey, fields)
end

-- Ready messages a claim may lease: those below every band.
local function readyCount()
  return redis.call('ZCOUNT', readyKey, '-inf', '(' .. BAND)
end

-- Forgets the bands found empty (and the hash with the last one). `bands`: name → band, those
-- this claim knows of. Returns true when some message is still held.
local function forgetEmptyBands(bands)
  if next(bands) == nil then
    return false
  end
  local any = false
  for name, band in pairs(bands) do
    if heldCount(band) == 0 then
      redis.call('HDEL', heldKey, name)
    else
      any = true
    end
  end
  if not any and redis.call('HLEN', heldKey) <= 1 then
    redis.call('DEL', heldKey)
  end
  return any
end

-- How many messages of each of `names` are held, comma-separated, in their order.
local function heldCounts(names)
  if #names == 0 then
    return ''
  end
  local bands = redis.call('EXISTS', heldKey) == 1 and redis.call('HMGET', heldKey, unpack(names)) or {}
  local counts = {}
  for i = 1, #names do
    counts[i] = bands[i] and heldCount(tonumber(bands[i])) or 0
  end
  return table.concat(counts, ',')
end
