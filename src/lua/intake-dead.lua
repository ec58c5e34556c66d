-- intake-dead.lua: an intake item bigger than maxBodyBytes becomes a dead
-- letter with the reason, under the id its position gave it, instead of a
-- message (src/queue/intake/oversize.ts). Records over 64 KiB were written to
-- their body key first (spill.ts, listed in the spills set) and this stores
-- their stub, taking the nonce off the list (kept, or deleted when not stored).
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] id; ARGV[2] record (or stub); ARGV[3] reason
-- ARGV[4] the record's bytes; ARGV[5] the body key's nonce when spilled, else ''
-- Returns 1, or 0 when the id is there already (the same item, after a crash).
argCount(5)
argText(1, 'id')
argInt(4, "the record's bytes", 0)
local id, nonce = ARGV[1], ARGV[5]
if isTaken(id) then
  if nonce ~= '' then
    redis.call('ZREM', spillsKey, nonce)
    redis.call('DEL', bodyKey(nonce))
  end
  return 0
end
fill(msgKey, { id, ARGV[2] })
if nonce ~= '' then
  fill(bigKey, { id, ARGV[4] .. '/' .. nonce })
  redis.call('ZREM', spillsKey, nonce)
elseif tonumber(ARGV[4]) > BIG_RECORD then
  fill(bigKey, { id, ARGV[4] })
end
redis.call('ZADD', deadKey, nowMs(), id)
redis.call('HSET', reasonKey, id, ARGV[3])
return 1
