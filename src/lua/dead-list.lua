-- dead-list.lua (read only): a page of dead letters, oldest first.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] offset; ARGV[2] count; ARGV[3] byte budget: a page stops early
--   once its records pass it (at least one entry), so big bodies cannot stall Redis
-- Returns { id, diedAtMs, record, reason, lastError, failedAttempts, ... }
local first = tonumber(ARGV[1])
local page = redis.call('ZRANGE', deadKey, first, first + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local budget, bytes = tonumber(ARGV[3]), 0
local out = {}
for i = 1, #page, 2 do
  if bytes > budget then
    break
  end
  local id = page[i]
  local rec = redis.call('HGET', msgKey, id) or false
  bytes = bytes + (rec and #rec or 0)
  out[#out + 1] = id
  out[#out + 1] = page[i + 1]
  out[#out + 1] = rec
  out[#out + 1] = redis.call('HGET', reasonKey, id) or false
  out[#out + 1] = redis.call('HGET', errKey, id) or false
  out[#out + 1] = redis.call('HGET', attKey, id) or '0'
end
return out
