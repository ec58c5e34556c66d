-- dead-retry.lua: put dead letters back to work, ready now, attempts reset.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] '*' for the oldest ARGV[2] dead letters, or 'ids' with ARGV[2..] ids
-- Returns how many went back.
local ids = selectDead()
if #ids == 0 then
  return 0
end
local now = nowMs()
local recs = bulkRead('HMGET', msgKey, ids)
local seq = redis.call('INCRBY', seqKey, #ids) - #ids
local ready, dues = {}, {}
for i = 1, #ids do
  -- A record too broken to read stays where it is: retrying cannot mend it.
  local priority = recs[i] and parseHeader(recs[i])
  if priority then
    ready[#ready + 1] = readyScore(priority, seq + i)
    ready[#ready + 1] = ids[i]
    dues[#dues + 1] = ids[i]
    dues[#dues + 1] = num(now)
  end
end
if #ready == 0 then
  return 0
end
local moved = {}
for i = 2, #ready, 2 do
  moved[#moved + 1] = ready[i]
end
bulk('ZREM', deadKey, moved)
bulk('HDEL', attKey, moved)
bulk('HDEL', errKey, moved)
bulk('HDEL', reasonKey, moved)
bulk('ZADD', readyKey, ready)
bulk('HSET', dueKey, dues)
wake()
return #moved
