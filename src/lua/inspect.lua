-- inspect.lua (read only): where one message stands.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: milliseconds per delayed-set score unit; ARGV[2] id
-- Returns { state, record, failedAttempts, lastError, deadReason, dueMs, stateScore }
-- with state one of delayed, ready, active, dead, or false when unknown.
local unit = tonumber(ARGV[1])
local id = ARGV[2]
local rec = redis.call('HGET', msgKey, id)
local state, score = false, false
local delayedScore = redis.call('ZSCORE', delayedKey, id)
if delayedScore then
  state, score = 'delayed', num(math.floor(tonumber(delayedScore) * unit + 0.5))
  if not rec then
    rec = '' -- a raw member not yet promoted
  end
elseif redis.call('ZSCORE', readyKey, id) then
  state = 'ready'
else
  local lease = redis.call('ZSCORE', activeKey, id)
  local died = redis.call('ZSCORE', deadKey, id)
  if lease then
    state, score = 'active', lease
  elseif died then
    state, score = 'dead', died
  end
end
if not state then
  return { false }
end
local dueMs = score
if state ~= 'delayed' then
  dueMs = redis.call('HGET', dueKey, id)
end
return {
  state,
  rec or false,
  redis.call('HGET', attKey, id) or '0',
  redis.call('HGET', errKey, id) or false,
  redis.call('HGET', reasonKey, id) or false,
  dueMs or false,
  score or false,
}
