-- intake-adopt.lua: a launcher takes over the holding list of one that stopped
-- beating (src/runtime/intake/recovery.ts). The list is renamed, so only one
-- adopter gets it, and its counter goes with it, so its items keep their ids.
-- The old counter jumps past the adopted items: should the old owner wake up
-- (it was only stopped), its next commit sees a changed counter and drops
-- nothing, and the items it moves later get new positions.
-- KEYS[1] the old holding list, KEYS[2] its counter
-- KEYS[3] the adopter's new holding list (same slot, not existing), KEYS[4] its counter
-- Returns how many items were adopted, or -1 when the old list is gone.
argCount(0)
local DAY_MS = 86400000
if redis.call('EXISTS', KEYS[1]) == 0 then
  -- Nothing held. The counter stays a day (a stopped owner resuming keeps counting), then goes.
  redis.call('PEXPIRE', KEYS[2], DAY_MS)
  return -1
end
local taken = tonumber(redis.call('GET', KEYS[2]) or '0')
local held = redis.call('LLEN', KEYS[1])
redis.call('RENAME', KEYS[1], KEYS[3])
redis.call('SET', KEYS[4], taken)
redis.call('SET', KEYS[2], taken + held)
redis.call('PEXPIRE', KEYS[2], DAY_MS)
return held
