-- dead-list.lua (read only): a page of dead letters, oldest first.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] offset; ARGV[2] count
-- Returns { id, diedAtMs, record, reason, lastError, failedAttempts, ... }
local page = redis.call('ZRANGE', deadKey, ARGV[1], tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #page, 2 do
  local id = page[i]
  out[#out + 1] = id
  out[#out + 1] = page[i + 1]
  out[#out + 1] = redis.call('HGET', msgKey, id) or false
  out[#out + 1] = redis.call('HGET', reasonKey, id) or false
  out[#out + 1] = redis.call('HGET', errKey, id) or false
  out[#out + 1] = redis.call('HGET', attKey, id) or '0'
end
return out
