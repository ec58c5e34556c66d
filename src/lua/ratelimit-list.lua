-- ratelimit-list.lua: the live rate-limit buckets of a prefix, for stats and /metrics.
-- Reads only: tokens are computed as of now (Redis's clock), nothing is written.
-- KEYS[1] the index: zset bucket name → when its bucket expires (ms), see ratelimit-take.lua
-- ARGV[1] the buckets' key prefix (`{<prefix>:rate}:b:`): a bucket's key is it .. name,
--   in the index's slot (read undeclared: the name is only known from the index)
-- ARGV[2] most buckets returned
-- Returns 6 for each bucket: name, max, per ms, cap, tokens in thousandths, ms since a
-- caller last waited for its tokens (0: one does now; -1: never; the whole queue's bucket
-- only, see ratelimit-take.lua)
argCount(2)
argText(1, "the buckets' key prefix")
argInt(2, 'most buckets returned', 1, 100000)
guardFormat(formatKeyBeside(KEYS[1]), false) -- reads only: refuse, never raise
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local names = redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, name in ipairs(names) do
  local s = redis.call('HMGET', ARGV[1] .. name, 't', 'at', 'max', 'per', 'cap', 'hold')
  local tokens, at = tonumber(s[1]), tonumber(s[2])
  local max, per, cap = tonumber(s[3]), tonumber(s[4]), tonumber(s[5])
  if tokens and at and max and per and cap then
    tokens = math.min(cap, tokens + math.max(0, now - at) * max / per)
    local hold = tonumber(s[6]) or 0
    out[#out + 1] = name
    out[#out + 1] = max
    out[#out + 1] = per
    out[#out + 1] = cap
    out[#out + 1] = math.floor(tokens * 1000)
    out[#out + 1] = hold > 0 and math.max(0, now - hold) or -1
  end
end
return out
