-- fail.lua: a leased message failed. Retry it later with its backoff, or
-- dead-letter it after its last attempt (or at once when told to).
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit
-- ARGV[2] lease token; ARGV[3] id
-- ARGV[4] error text (kept as the message's last error: UTF-8, never the byte 0xff)
-- ARGV[5] 'retry' or 'dead'
-- ARGV[6] reason when dead at once ('' = the default)
-- ARGV[7] default backoff cap in ms (records may carry their own)
-- ARGV[8] events flag ('1' on: events.lua)
-- ARGV[9] dead letters' retention (keepDead): "<count>:<age ms>" (0: no limit of that
--   kind), '' keeps them until purged; a death trims at most 1 + TRIM_SLACK (history.lua)
-- ARGV[10] the error's stack, at most 8 KiB ('' for none): kept after the text as
--   `<text>\xff<stack>` (src/queue/error-stack.ts, format 8)
-- Returns 'retry', 'dead', or 'stale' (the caller's lease is gone: nothing changed).
argCount(10)
local unit, id = argUnit(1), ARGV[3] -- any bytes: a raw member's id is the member
argText(2, 'lease token')
argOneOf(5, 'mode', { 'retry', 'dead' })
argInt(7, 'default backoff cap in ms', 0)
argOneOf(8, 'events flag', { '1', '' })
if ARGV[9] ~= '' and not string.match(ARGV[9], '^%d+:%d+$') then
  refuse(9, "dead letters' retention must be '<count>:<age ms>' or ''")
end
if #ARGV[10] > 8192 then
  refuse(10, 'stack must be at most 8192 bytes')
end
setEvents(ARGV[8])
local lease = redis.call('HGET', dueKey, id)
local suffix = '/' .. ARGV[2]
if not lease or not string.find(lease, suffix, #lease - #suffix + 1, true) then
  return 'stale'
end
redis.call('ZREM', activeKey, id)
redis.call('HDEL', dueKey, id)
local now = nowMs()
local attempts = redis.call('HINCRBY', attKey, id, 1)
redis.call('HSET', errKey, id, ARGV[10] == '' and ARGV[4] or (ARGV[4] .. '\255' .. ARGV[10]))
-- One record, read to learn its attempts and backoff.
local rec = redis.call('HGET', msgKey, id) or ''
local maxAttempts, kind, delay, cap =
  string.match(rec, '^[0-9a-z]*|%d+|(%d+)|([fe])(%d+)%-?(%d*)|')
maxAttempts = tonumber(maxAttempts)
if ARGV[5] == 'dead' or maxAttempts == nil or attempts >= maxAttempts then
  local reason = ARGV[6]
  if reason == '' then
    reason = maxAttempts == nil and 'malformed record'
      or ('failed ' .. attempts .. ' of ' .. maxAttempts .. ' attempts')
  end
  redis.call('ZADD', deadKey, now, id)
  redis.call('HSET', reasonKey, id, reason)
  publish('dead', { id }, { nameOf(rec) }, reason)
  -- A flow child's parent learns it (flow-lib.lua), with the error when the reason is not it.
  flow().recordDied(id, rec, reason == ARGV[4] and reason or (reason .. ': ' .. ARGV[4]), now)
  trimDead(ARGV[9], now, 1 + TRIM_SLACK)
  return 'dead'
end
local backoff = tonumber(delay)
if kind == 'e' then
  backoff = backoff * 2 ^ (attempts - 1)
end
backoff = math.min(backoff, tonumber(cap) or tonumber(ARGV[7]))
local dueMs = now + backoff
redis.call('ZADD', delayedKey, dueMs / unit, id)
wakeIfEarlier(dueMs)
publish('failed', { id }, { nameOf(rec) }, string.format('%d', dueMs) .. '|' .. attempts .. '|' .. ARGV[4])
return 'retry'
