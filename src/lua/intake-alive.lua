-- intake-alive.lua: a launcher with an intake says it is alive, (re-)registers
-- its holding lists, and learns which registered holding lists belong to
-- launchers that stopped beating (src/runtime/intake/recovery.ts).
-- KEYS[1] `{<prefix>:intake}:alive`: zset launcher id → last beat (Redis ms)
-- KEYS[2] `{<prefix>:intake}:holding`: hash holding list name → "<owner>\n<json>"
-- ARGV[1] this launcher's id
-- ARGV[2] ms without a beat after which a launcher counts as dead
-- ARGV[3..] pairs of holding list name, entry, to register for this launcher
-- Returns the dead launchers' entries: holding list name, entry, … (at most 100 pairs).
argCount(2, -1)
argText(1, 'launcher id')
argInt(2, 'ms without a beat', 1)
if #ARGV % 2 ~= 0 then
  refuse(#ARGV, 'holding lists must come in pairs of name and entry')
end
guardFormat(formatKeyBeside(KEYS[1]), true)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
for i = 3, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
-- Launchers gone for a day hold nothing any more (their lists were adopted or they had none).
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
local deadline = now - tonumber(ARGV[2])
local out = {}
local cursor = '0'
repeat
  local page = redis.call('HSCAN', KEYS[2], cursor)
  cursor = page[1]
  local entries = page[2]
  for i = 1, #entries, 2 do
    local owner = string.match(entries[i + 1], '^[^\n]*')
    if owner ~= ARGV[1] then
      local beat = redis.call('ZSCORE', KEYS[1], owner)
      if not beat or tonumber(beat) < deadline then
        out[#out + 1] = entries[i]
        out[#out + 1] = entries[i + 1]
      end
    end
  end
until cursor == '0' or #out >= 200
return out
