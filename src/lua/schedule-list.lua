-- schedule-list.lua (read only): the states of the group's schedules, or of one.
-- Its cost follows the number of schedules in the group (each a few hundred bytes).
-- KEYS: the group's keys (lib.lua), the schedules hash (schedule-lib.lua)
-- ARGV[1] a schedule id, or '' for all
-- Returns the state JSONs.
argCount(1)
if ARGV[1] ~= '' then
  local text = redis.call('HGET', schedulesKey, 's:' .. ARGV[1])
  return text and { text } or {}
end
local out, all = {}, redis.call('HGETALL', schedulesKey)
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 's:' then
    out[#out + 1] = all[i + 1]
  end
end
return out
