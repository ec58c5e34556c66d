-- report.lua: progress and log lines from running jobs (a handler's ctx.progress and ctx.log,
-- src/runtime/reports.ts): one call for every job of the group that reported since the last.
-- KEYS: the group's keys (lib.lua). What it writes goes with the job's record (lib-ids.lua
--   forgetReports):
--   progress hash (KEYS[28]): id → "<lines logged so far>|<progress JSON>" ('' after the bar
--     while no progress was given)
--   logKey(id) (`{prefix:g}:log:<id>`): a list of the job's last LINES_KEPT lines
-- ARGV[1] the events flag ('1' on: events.lua)
-- ARGV[2] how many lease arguments follow, then the leases (token, count, ids..., as claimed)
-- then for each id named, in that order: its progress (JSON text of at most 4096 bytes, ''
--   for none), its name ('' none; sent only with events on), how many lines it logged since
--   its last report, how many of those follow (the last ones: at most 100), and those lines
--   (at most 1024 bytes each).
-- Only a lease's holder reports, as only it may ack: the reports of a lease that expired or
-- went to another consumer change nothing. A progress is published on the event stream
-- (`progress`, meta: the values as one JSON array, in the order of the entry's ids).
-- Returns { reported, refused ids... }.
local LINES_KEPT, PROGRESS_BYTES, LINE_BYTES = 100, 4096, 1024

argCount(2, -1)
argEvents(1)
local leaseEnd = 2 + argInt(2, 'count of lease arguments', 0, #ARGV - 2)
local named = argLeases(3, leaseEnd)
local blocks, at = {}, leaseEnd + 1
for p = 1, named do
  if at + 3 > #ARGV then
    argCount(at + 3, -1)
  end
  local progress = ARGV[at]
  if #progress > PROGRESS_BYTES or (progress ~= '' and not pcall(cjson.decode, progress)) then
    refuse(at, "progress must be JSON text of at most 4096 bytes ('' for none)")
  end
  local logged = argInt(at + 2, 'count of lines logged', 0)
  local most = math.min(logged, LINES_KEPT, #ARGV - at - 3)
  local sent = argInt(at + 3, 'count of lines sent (at most those logged and 100)', 0, most)
  for j = at + 4, at + 3 + sent do
    if #ARGV[j] > LINE_BYTES then
      refuse(j, 'a log line must be at most 1024 bytes')
    end
  end
  blocks[p] = at
  at = at + 4 + sent
end
if at - 1 ~= #ARGV then
  error({ err = 'ERR skyq: wrong number of arguments: ' .. (at - 1) .. ' for ' .. named
    .. ' reporting ids, got ' .. #ARGV })
end

setEvents(ARGV[1])
local held, refused, _, positions = leasedBy(3, false, leaseEnd)
if #held > 0 then
  local before = bulkRead('HMGET', progressKey, held)
  local fields, ids, names, values = {}, {}, {}, {}
  for i = 1, #held do
    local b = blocks[positions[i]]
    local progress, sent = ARGV[b], tonumber(ARGV[b + 3])
    local count, last = 0, ''
    if before[i] then
      local stored, rest = string.match(before[i], '^(%d+)|(.*)$')
      count, last = tonumber(stored) or 0, rest or ''
    end
    if progress ~= '' then
      last = progress
      ids[#ids + 1], names[#names + 1], values[#values + 1] = held[i], ARGV[b + 1], progress
    end
    fields[#fields + 1] = held[i]
    fields[#fields + 1] = string.format('%d', count + tonumber(ARGV[b + 2])) .. '|' .. last
    if sent > 0 then
      local key = logKey(held[i])
      if redis.call('RPUSH', key, unpack(ARGV, b + 4, b + 3 + sent)) > LINES_KEPT then
        redis.call('LTRIM', key, -LINES_KEPT, -1)
      end
    end
  end
  bulk('HSET', progressKey, fields)
  for i = 1, #ids, EVENTS_PER_ENTRY do
    local last = math.min(i + EVENTS_PER_ENTRY - 1, #ids)
    local meta = '[' .. table.concat(values, ',', i, last) .. ']'
    publish('progress', { unpack(ids, i, last) }, { unpack(names, i, last) }, meta)
  end
end
local out = { #held }
for i = 1, #refused do
  out[#out + 1] = refused[i]
end
return out
