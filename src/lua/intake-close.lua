-- intake-close.lua: a holding list whose items all went into skyq is removed,
-- with its counter, when its owner stops (src/runtime/intake/intake.ts).
-- KEYS[1] the holding list, KEYS[2] its counter
-- Returns 1 when removed, 0 when it still holds items (they wait for recovery).
argCount(0)
if redis.call('LLEN', KEYS[1]) > 0 then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
