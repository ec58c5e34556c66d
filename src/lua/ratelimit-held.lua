-- ratelimit-held.lua (read only): how many messages of each job name a per-name rate limit
-- holds back in this group now (their bands in the ready set: lib-held.lua), for stats,
-- /metrics and the dashboard: a name's limit is limiting while some are held.
-- KEYS: the group's keys (lib.lua)
-- ARGV: none
-- Returns name, count for each name with messages held back.
argCount(0)
local out = {}
for _, entry in ipairs(heldBands()) do
  local count = heldCount(entry[2])
  if count > 0 then
    out[#out + 1] = entry[1]
    out[#out + 1] = count
  end
end
return out
