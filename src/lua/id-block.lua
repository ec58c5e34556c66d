-- id-block.lua: reserve a block of generated ids for a producer (src/queue/id-blocks.ts).
-- The group's counter never stands below Redis's clock: (ms since ID_EPOCH) * 1024. So a
-- server that lost its data, was flushed or was replaced by an older backup (the counter gone
-- or gone back) still hands out only numbers above every one it gave before, as long as its
-- clock has moved on and no group took more than 1,024 ids a ms on average (a burst runs
-- ahead of the clock for a while; that is all). Generated ids are never generated twice.
-- KEYS: the group's keys (lib.lua): seqKey
-- ARGV[1] how many ids
-- Returns the block's last number; its first is that minus ARGV[1] plus 1.
argCount(1)
local count = argInt(1, 'how many ids', 1, 1000000)
local ID_EPOCH = 1767225600000 -- 2026-01-01T00:00:00Z: keeps the numbers (and ids) shorter
local floor = (nowMs() - ID_EPOCH) * 1024
local current = tonumber(redis.call('GET', seqKey)) or 0
local last = math.max(current, floor) + count
redis.call('SET', seqKey, string.format('%d', last))
return last
