-- fail.lua: a leased message failed. Retry it later with its backoff, or
-- dead-letter it after its last attempt (or at once when told to).
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit
-- ARGV[2] id
-- ARGV[3] error text (kept as the message's last error)
-- ARGV[4] 'retry' or 'dead'
-- ARGV[5] reason when dead at once ('' = the default)
-- Returns 'retry', 'dead' or 'gone' (not leased any more: nothing changed).
local unit = tonumber(ARGV[1])
local id = ARGV[2]
if redis.call('ZREM', activeKey, id) == 0 then
  return 'gone'
end
local now = nowMs()
local attempts = redis.call('HINCRBY', attKey, id, 1)
redis.call('HSET', errKey, id, ARGV[3])
redis.call('HDEL', dueKey, id)
local rec = redis.call('HGET', msgKey, id)
local _, maxAttempts, backoffKind, backoffMs = nil, 1, 'f', 0
if rec then
  _, maxAttempts, backoffKind, backoffMs = parseHeader(rec)
end
if ARGV[4] == 'dead' or maxAttempts == nil or attempts >= maxAttempts then
  local reason = ARGV[5]
  if reason == '' then
    reason = maxAttempts == nil and 'malformed record' or ('failed ' .. attempts .. ' of ' .. maxAttempts .. ' attempts')
  end
  redis.call('ZADD', deadKey, now, id)
  redis.call('HSET', reasonKey, id, reason)
  return 'dead'
end
local delay = backoffMs
if backoffKind == 'e' then
  delay = backoffMs * 2 ^ (attempts - 1)
end
local dueMs = now + delay
wakeIfEarlier(dueMs / unit)
redis.call('ZADD', delayedKey, num(dueMs / unit), id)
return 'retry'
