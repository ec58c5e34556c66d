-- format.lua: the data format of a prefix's keys (records, keys, scripts), kept in
-- one key beside the groups. Raised to the caller's format when that is newer (the
-- caller reads every older one); never lowered: a client that finds a newer format
-- refuses to run (src/queue/format.ts). Not prefixed with lib.lua.
-- KEYS[1] <prefix>:format
-- ARGV[1] the format this client writes (an integer)
-- ARGV[2] '1' to raise the stored format to it, '' only to read it (a reader: raiseFormat)
-- Returns the format stored before this call (0 when there was none), or an error
-- when the key holds something other than a format number.
argCount(2)
argInt(1, 'format', 1, 1000000)
local raise = argOneOf(2, 'raise', { '1', '' }) == '1'
local stored = redis.call('GET', KEYS[1])
local before = 0
if stored then
  before = tonumber(stored)
  if before == nil or before ~= math.floor(before) or before < 1 then
    return redis.error_reply('ERR ' .. KEYS[1] .. ' holds "' .. string.sub(stored, 1, 40) .. '", not a format number')
  end
end
local wanted = tonumber(ARGV[1])
if raise and before < wanted then
  redis.call('SET', KEYS[1], wanted)
end
return before
