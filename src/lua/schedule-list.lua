-- schedule-list.lua (read only): the states of the group's schedules, or of one, and their
-- occurrences' records when asked (head and tail: header, name tag, kind and body).
-- Its cost follows the number of schedules in the group (each a few hundred bytes, and its
-- body, at most 60 KiB, when asked).
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] a schedule id, or '' for all
-- ARGV[2] 'records' to return each state's record after it; else absent
-- Returns the state JSONs (each followed by its record with 'records').
argCount(1, 2)
local records = #ARGV == 2 and argOneOf(2, 'what to return', { 'records' })
local out = {}
local function add(id, text)
  out[#out + 1] = text
  if records then
    out[#out + 1] = (redis.call('HGET', schedulesKey, 'h:' .. id) or '')
      .. (redis.call('HGET', schedulesKey, 't:' .. id) or '')
  end
end
if ARGV[1] ~= '' then
  local text = redis.call('HGET', schedulesKey, 's:' .. ARGV[1])
  if text then
    add(ARGV[1], text)
  end
  return out
end
local all = redis.call('HGETALL', schedulesKey)
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 's:' then
    add(string.sub(all[i], 3), all[i + 1])
  end
end
return out
