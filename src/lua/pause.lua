-- pause.lua: pause or resume a group. While paused, claims ack what they are
-- given but lease nothing; every launcher honours it, since it lives here.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1] 'on' to pause, 'off' to resume
-- Returns 1 when the state changed, 0 when it already was so.
argCount(1)
if argOneOf(1, 'state', { 'on', 'off' }) == 'on' then
  if not redis.call('SET', pausedKey, '1', 'NX') then
    return 0
  end
  -- One consumer looks now and reports the pause; adds wake nobody until resume.
  pushWake(0)
  return 1
end
if redis.call('DEL', pausedKey) == 0 then
  return 0
end
-- Consumers parked on a paused group wait for a token: wake one; its claim wakes more if needed.
wake()
return 1
