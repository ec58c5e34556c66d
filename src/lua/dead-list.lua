-- dead-list.lua (read only): a page of dead letters, oldest first.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] offset; ARGV[2] count; ARGV[3] byte budget: a page stops early
--   once its ids and records pass it (at least one entry), or at 500 entries,
--   so neither big bodies nor a big count can stall Redis (the caller asks again)
-- Returns { id, diedAtMs, record, reason, lastError, failedAttempts, ... }
local ENTRIES = 500 -- most entries a call reads, however small: each costs five lookups
local first = tonumber(ARGV[1])
local count = math.min(tonumber(ARGV[2]), ENTRIES)
local page = redis.call('ZRANGE', deadKey, first, first + count - 1, 'WITHSCORES')
local budget, bytes = tonumber(ARGV[3]), 0
-- A spilled record is a stub here, read after by the client: count its real bytes.
local big = redis.call('EXISTS', bigKey) == 1
local out = {}
for i = 1, #page, 2 do
  if bytes > budget then
    break
  end
  local id = page[i]
  -- A member named like the placeholder field has no record: its name is its body.
  local rec = id ~= KEEP_FIELD and redis.call('HGET', msgKey, id) or false
  local spilled = big and tonumber(string.match(redis.call('HGET', bigKey, id) or '', '^(%d+)/'))
  bytes = bytes + #id + (spilled or (rec and #rec) or 0)
  out[#out + 1] = id
  out[#out + 1] = page[i + 1]
  out[#out + 1] = rec
  out[#out + 1] = redis.call('HGET', reasonKey, id) or false
  out[#out + 1] = redis.call('HGET', errKey, id) or false
  out[#out + 1] = redis.call('HGET', attKey, id) or '0'
end
return out
