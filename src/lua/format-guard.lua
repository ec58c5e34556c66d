-- format-guard.lua: the data format this script was written for, and the guard every script
-- runs before it reads or writes anything else (format 8 on, src/queue/format.ts). The
-- loader puts this text right after args.lua in every script, with SKYQ_FORMAT set to its
-- own format (src/redis/scripts.ts). Each slot skyq uses keeps the format of the data in it:
-- a group's slot in `{<prefix>:<g>}:format` (KEYS[27]), the rate limits' and the intake's in
-- `{<prefix>:rate}:format` and `{<prefix>:intake}:format`. A script refuses data of a newer
-- format, naming both formats, so an older skyq never misreads what a newer one wrote; it
-- raises a missing or older one to its own (it reads every older format), so a server that
-- lost its keys has them back at the next call.
local SKYQ_FORMAT_TEXT = tostring(SKYQ_FORMAT)

-- `raise`: false for a read-only script (no-writes), which only refuses.
local function guardFormat(key, raise)
  local stored = redis.call('GET', key)
  if stored == SKYQ_FORMAT_TEXT then
    return
  end
  local n = tonumber(stored)
  if n and n > SKYQ_FORMAT then
    error({ err = 'ERR skyq: data format ' .. stored .. ' in ' .. key
      .. ' is newer than this skyq (format ' .. SKYQ_FORMAT_TEXT .. ')' })
  end
  if raise then
    redis.call('SET', key, SKYQ_FORMAT_TEXT)
  end
end

-- The format key in the slot of a key named `{tag}:…` (the rate limits', the intake's).
local function formatKeyBeside(key)
  return string.match(key, '^{[^}]*}') .. ':format'
end
