-- ratelimit-take.lua: take tokens from rate-limit buckets and hand back unused ones,
-- in one call on Redis's clock (TIME), so every launcher of a prefix shares them.
-- Every bucket of a prefix lives in one hash slot (`{<prefix>:rate}:…`, see
-- src/queue/ratelimit/keys.ts), so one call serves the whole-queue bucket and the
-- per-name ones together, on a cluster too. It is called before a claim (take for the
-- whole queue, and for the names whose messages are held back) and after one (hand back
-- what it did not use): a claim script cannot touch these keys, they are in another slot
-- than the group (src/runtime/rate-gate.ts).
-- A bucket is a hash: t tokens (fractional), at (ms t was computed at), max, per (ms),
-- cap (most tokens saved up), hold (the whole queue's only: ms until which a caller that got
-- no token waits, holding work back; a take that got some leases what it got and asks again
-- at once). Messages a name's limit holds back are counted where they wait (lib-held.lua).
-- (Format 7 kept `held`, when the last short take was: it is left alone, and read by no one.)
-- Tokens refill evenly, max per `per` ms, up to cap; a new bucket starts full.
-- KEYS[1] the index: zset bucket name → when its bucket expires (ms)
-- KEYS[2..] the buckets, in the order of the ARGV groups
-- ARGV: 6 for each bucket: name, max, per ms, cap, want, refund
-- Returns 3 for each bucket: granted, wait ms (until the tokens still wanted are there,
-- up to 3/4 of cap; 0 when granted), tokens left in thousandths
if #KEYS < 2 or #ARGV ~= (#KEYS - 1) * 6 then
  error({ err = 'ERR skyq: wrong number of arguments: 6 for each of the ' .. (#KEYS - 1)
    .. ' buckets, got ' .. #ARGV })
end
for a = 0, #ARGV - 1, 6 do
  argText(a + 1, 'bucket name')
  for k, what in ipairs({ 'max', 'per ms', 'cap' }) do
    local n = argNumber(a + 1 + k, what)
    if n <= 0 or n > ARG_MAX then
      refuse(a + 1 + k, what .. ' must be above 0 and at most ' .. string.format('%d', ARG_MAX))
    end
  end
  argInt(a + 5, 'tokens wanted', 0)
  local refund = argNumber(a + 6, 'tokens handed back')
  if refund < 0 or refund > ARG_MAX then
    refuse(a + 6, 'tokens handed back must be from 0 to ' .. string.format('%d', ARG_MAX))
  end
end
guardFormat(formatKeyBeside(KEYS[1]), true)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = {}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #KEYS do
  local a = (i - 2) * 6
  local name = ARGV[a + 1]
  local max, per, cap = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local want, refund = tonumber(ARGV[a + 5]), tonumber(ARGV[a + 6])
  local rate = max / per -- tokens per ms
  local state = redis.call('HMGET', KEYS[i], 't', 'at', 'hold')
  local tokens, at = tonumber(state[1]), tonumber(state[2])
  if not tokens or not at then
    tokens, at = cap, now
  end
  -- A clock that went back (a failover to another server) refills nothing, never negative.
  tokens = math.min(cap, tokens + math.max(0, now - at) * rate + refund)
  local granted = math.min(want, math.floor(tokens))
  tokens = tokens - granted
  local wait = 0
  local hold = tonumber(state[3]) or 0
  if granted < want then
    -- Ask again before the bucket is full: tokens that come while it is full are lost.
    local need = math.min(want - granted, math.max(1, math.floor(cap * 3 / 4)))
    wait = math.max(1, math.ceil((need - tokens) / rate))
    if name == '*' and granted == 0 then
      hold = math.max(hold, now + wait)
    end
  end
  local ttl = math.max(60000, 2 * per)
  redis.call('HSET', KEYS[i], 't', string.format('%.6f', tokens), 'at', now, 'max', max,
    'per', per, 'cap', cap, 'hold', hold)
  redis.call('PEXPIRE', KEYS[i], ttl)
  redis.call('ZADD', KEYS[1], now + ttl, name)
  out[#out + 1] = granted
  out[#out + 1] = wait
  out[#out + 1] = math.floor(tokens * 1000)
end
redis.call('PEXPIRE', KEYS[1], 3600000)
return out
