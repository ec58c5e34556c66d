-- inspect.lua (read only): where one message stands.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] unit: ms per delayed-set score unit; ARGV[2] id
-- ARGV[3] kept history's age limit in ms (0 none): an older entry the trimming
--   has not reached yet is shown as gone
-- Returns { state, record, failedAttempts, lastError, deadReason, dueMs,
--   stateScore, priority, history entry, dedupe window end } with state one of
--   delayed, ready, active, waiting (a flow parent), dead, done (stateScore: when it
--   finished, or for waiting when it was added; history.lua
--   says what the entry holds), or { false, dedupe window end } when unknown. The
--   window end (ms, dedupe.lua) is false when no window is open. Two more follow a known
--   message's: its reports (report.lua: "<lines logged>|<progress JSON>", false when none)
--   and its last log lines (a list, empty when none).
argCount(3)
local unit = argUnit(1)
local id = ARGV[2] -- any bytes: a raw member's id is the member
argInt(3, 'kept history age in ms', 0)

-- The job's reports and log lines (report.lua); the list is read only when it logged.
local function reportsOf(job)
  local report = redis.call('HGET', progressKey, job)
  if not report or string.sub(report, 1, 2) == '0|' then
    return report or false, {}
  end
  return report, redis.call('LRANGE', logKey(job), 0, -1)
end

local state, dueMs, score = false, false, false
local delayedScore = redis.call('ZSCORE', delayedKey, id)
local due = redis.call('HGET', dueKey, id)
if delayedScore then
  -- Due ones of priority 0 wait in the delayed set: they are ready.
  dueMs = msOfScore(delayedScore, unit)
  state = dueMs <= nowMs() and 'ready' or 'delayed'
  score = dueMs
elseif due and string.find(due, '/', 1, true) then
  state, dueMs, score = 'active', dueOf(due), redis.call('ZSCORE', activeKey, id)
elseif due then
  state, dueMs = 'ready', tonumber(due)
else
  local died = redis.call('ZSCORE', deadKey, id)
  local finished = not died and redis.call('ZSCORE', doneKey, id)
  local ageMs = tonumber(ARGV[3]) or 0
  local waiting = not (died or finished) and redis.call('ZSCORE', waitingKey, id)
  if died then
    state, score = 'dead', died
  elseif waiting then
    state, score = 'waiting', waiting -- a flow parent (flow-lib.lua): score is when it was added
  elseif finished and (ageMs == 0 or tonumber(finished) >= nowMs() - ageMs) then
    return {
      'done',
      redis.call('HGET', msgKey, id) or false,
      '0',
      false,
      false,
      false,
      finished,
      false, -- the record's priority
      redis.call('HGET', histKey, id) or false,
      windowOf(id),
      reportsOf(id),
    }
  end
end
if not state then
  return { false, windowOf(id) }
end
return {
  state,
  redis.call('HGET', msgKey, id) or false, -- false: a raw member not leased yet
  redis.call('HGET', attKey, id) or '0',
  redis.call('HGET', errKey, id) or false,
  redis.call('HGET', reasonKey, id) or false,
  dueMs,
  score,
  redis.call('HGET', priKey, id) or '0',
  false, -- no history entry
  windowOf(id),
  reportsOf(id),
}
