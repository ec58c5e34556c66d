-- flow-lib.lua: flows, a parent that runs when its children are done (src/queue/flows/). The
-- loader puts this text after events.lua and before history.lua (whose ack calls it) in front
-- of each group script. It is one local, `flow()`, which builds the library on its first use in
-- a call and hands it back after: a script runs all of its prelude on every call, and building
-- these functions costs about 4 µs, which a call that never touches a flow must not pay (the
-- claim and ack of a message of no flow never call it). claim.lua has few locals to spare.
--
-- Design (format 8, src/queue/format.ts):
-- * A child is an ordinary message whose record carries the tag `f<bytes>:<parent ref>`, ref =
--   "<parent's group>:<o optional | m mandatory>:<parent id>". A parent's record carries
--   `c<bytes>:<number of children>`. The client reads both tags at claim time, so claim and ack
--   read nothing more for messages that are not flow members: the ack is told which of its ids
--   are flow members (history.lua ackLeased, flow().acked), and nothing else changes.
-- * A parent waits in the waiting set (id → when added) until its last child ended; its flow
--   data is in the group's flow hash, fields named after it:
--     <P>:n  children not ended yet        <P>:c  the children, JSON [[group, id, optional, name]]
--     <P>:d  "<score>|<priority>|<unit>": where it goes when released ('' score: due now)
--     <P>:u  its own parent ref when it is a child too (a death cascades without reading records)
--     <P>:r:<C>  child C's outcome: '' not ended, 'd<ms>|<kind><result>' done (history.lua's
--       result), 'x<reason>' dead, 'c' cancelled. The field exists from the add: a child that
--       is not the parent's (a stale report to a parent id added again) changes nothing.
-- * A child that ends reports its outcome (flow().report): in its parent's slot at once, in the
--   same script call (childrenEnded); else into its own slot's outbox (child id → "<ref>\n
--   <outcome>"), relayed into the parent's slot by flow-child-done.lua (src/queue/flows/relay.ts:
--   the client that acked it right after, and every launcher's actors every few seconds). The
--   relay is idempotent: an outcome is recorded once, the count drops only when it is new, and
--   an outbox entry goes only once a later relay found it recorded (flow-sweep.lua), so a kill
--   -9 or a failover between the steps leaves an entry that is relayed again, never a double.
-- * Done or optional-dead (or cancelled): the count drops; at 0 the parent is released to the
--   delayed set at its own due time (or now) in the same call. A mandatory child that died
--   makes its parent dead at once ("child <id> failed: <reason>"), which reports to its own
--   parent in turn: the death cascades to the root. Siblings still pending run on; their
--   outcomes find the parent no longer waiting and change nothing.
-- * A retried optional child that dies again changes nothing; one that is done replaces its
--   dead entry while the parent still waits (the count stays: it dropped at the death).
-- * Retention: a parent's flow data goes with its record. Acked without a kept history, at
--   once; otherwise it is listed in flowends when the parent ends, and flow().trim (flow-sweep.lua)
--   drops the data of those whose record is gone (history or dead letters trimmed, purged).
local flow
do
  local built
  flow = function()
    if built then
      return built
    end
    local F = {}
    built = F

    -- This script's group (its delayed set is `<prefix>:<g>`), read once and only by flow code.
    function F.group()
      F.here = F.here or tonumber(string.match(delayedKey, ':(%d+)$'))
      return F.here
    end

    -- A record's parent ref (`f` tag; nil when none) and whether it is a parent (`c` tag). Walks
    -- the tags after the header's fourth bar; the body is never scanned.
    function F.tagsOf(rec)
      if not rec then
        return nil, false
      end
      local _, at = string.find(rec, '^[^|]*|[^|]*|[^|]*|[^|]*|')
      if not at then
        return nil, false
      end
      at = at + 1
      local ref, parent = nil, false
      for _ = 1, 4 do
        local letter, bytes, from = string.match(rec, '^([npfc])(%d+):()', at)
        if not letter then
          break
        end
        at = from + tonumber(bytes)
        if letter == 'f' then
          ref = string.sub(rec, from, at - 1)
        elseif letter == 'c' then
          parent = true
        end
      end
      return ref, parent
    end

    -- A parent ref's group, whether the child is optional, and the parent's id.
    function F.parseRef(ref)
      local group, kind, parent = string.match(ref, '^(%d+):([om]):(.+)$')
      return tonumber(group), kind == 'o', parent
    end

    -- A parent's release: out of the waiting set, to wait for its own due time as add.lua would
    -- have put it (priority 0 in the delayed set; others in the ready set when due, with pri).
    function F.release(parent, now)
      redis.call('ZREM', waitingKey, parent)
      local spec = redis.call('HGET', flowKey, parent .. ':d') or '|0|1'
      local score, priority, unit = string.match(spec, '^([^|]*)|(%d+)|(%d+)$')
      unit = tonumber(unit) or 1
      local dueMs = score and score ~= '' and tonumber(score) * unit or nil
      if priority and priority ~= '0' then
        fill(priKey, { parent, priority })
      end
      if dueMs and dueMs > now then
        redis.call('ZADD', delayedKey, score, parent)
        wakeIfEarlier(dueMs)
      elseif priority and priority ~= '0' then
        toReady({ parent }, { now })
        wake()
      else
        redis.call('ZADD', delayedKey, unit == 1 and string.format('%d', now) or string.format('%.17g', now / unit), parent)
        wake()
      end
    end

    -- A parent ended (done and kept, or dead): its flow data stays while its record does.
    function F.ended(parent, now)
      redis.call('ZADD', flowEndsKey, now, parent)
    end

    -- A waiting parent dies of a child's death; its own parent learns of it (the cascade).
    function F.died(parent, reason, now)
      redis.call('ZREM', waitingKey, parent)
      redis.call('ZADD', deadKey, now, parent)
      redis.call('HSET', reasonKey, parent, reason)
      publish('dead', { parent }, nil, reason)
      F.ended(parent, now)
      local up = redis.call('HGET', flowKey, parent .. ':u')
      if up then
        F.report(parent, up, 'x' .. reason, now)
      end
    end

    -- Children of `parent` (this slot) ended: `ends` holds { child, optional, outcome } for
    -- each. Returns a status for each: 1 recorded now, 2 recorded before (a relay sent again),
    -- 0 the parent does not wait for it. One batch costs a few commands, whatever its size.
    function F.childrenEnded(parent, ends, now)
      local statuses = {}
      if not redis.call('ZSCORE', waitingKey, parent) then
        for i = 1, #ends do
          statuses[i] = 0
        end
        return statuses
      end
      local fields = {}
      for i, e in ipairs(ends) do
        fields[i] = parent .. ':r:' .. e[1]
      end
      local olds = bulkRead('HMGET', flowKey, fields)
      local writes, counted, death = {}, 0, nil
      for i, e in ipairs(ends) do
        local old, state = olds[i], string.sub(e[3], 1, 1)
        if not old then
          statuses[i] = 0 -- not one of its children (a report to an id that was added again)
        elseif old ~= '' then
          statuses[i] = 2
          if state == 'd' and string.sub(old, 1, 1) == 'x' then
            writes[#writes + 1] = fields[i] -- a retried optional child done after all
            writes[#writes + 1] = e[3]
          end
        else
          statuses[i] = 1
          writes[#writes + 1] = fields[i]
          writes[#writes + 1] = e[3]
          if state == 'x' and not e[2] then
            death = death or ('child ' .. e[1] .. ' failed: ' .. string.sub(e[3], 2))
          else
            counted = counted + 1
          end
        end
      end
      if #writes > 0 then
        bulk('HSET', flowKey, writes)
      end
      if death then
        F.died(parent, death, now)
      elseif counted > 0 and redis.call('HINCRBY', flowKey, parent .. ':n', -counted) <= 0 then
        F.release(parent, now)
      end
      return statuses
    end

    -- Flow children ended, each { child, parent ref, outcome }: a parent in this slot learns of
    -- its children at once (one batch each), one elsewhere through this slot's outbox.
    function F.reportAll(ends, now)
      local here, byParent, parents, outbox = F.group(), {}, {}, {}
      for _, e in ipairs(ends) do
        local group, optional, parent = F.parseRef(e[2])
        if group == here then
          if not byParent[parent] then
            byParent[parent] = {}
            parents[#parents + 1] = parent
          end
          local list = byParent[parent]
          list[#list + 1] = { e[1], optional, e[3] }
        elseif group then
          outbox[#outbox + 1] = e[1]
          outbox[#outbox + 1] = e[2] .. '\n' .. e[3]
        end
      end
      for _, parent in ipairs(parents) do
        F.childrenEnded(parent, byParent[parent], now)
      end
      if #outbox > 0 then
        bulk('HSET', outboxKey, outbox)
      end
    end

    -- One flow child ended (see reportAll).
    function F.report(child, ref, outcome, now)
      F.reportAll({ { child, ref, outcome } }, now)
    end

    -- A message died (fail.lua, claim.lua): a child reports it, a parent keeps its flow data.
    function F.recordDied(id, rec, reason, now)
      local ref, parent = F.tagsOf(rec)
      if parent then
        F.ended(id, now)
      end
      if ref then
        F.report(id, ref, 'x' .. reason, now)
      end
    end

    -- The ack's flow section (history.lua ackLeased): ARGV[at] how many entries, then for each
    -- the acked id's position among the ids named, its kind ('f' a child, 'c' a parent, 'fc'
    -- both), its parent ref ('' for none) and its result (history.lua's "<ms>|<kind><data>").
    -- `heldAt`: position → id for the leases the caller held; `kept`: a history is kept.
    function F.acked(at, heldAt, kept, now)
      local ends = {}
      for j = at + 1, at + 4 * tonumber(ARGV[at]), 4 do
        local id, kind = heldAt[tonumber(ARGV[j])], ARGV[j + 1]
        if id then
          if string.find(kind, 'f', 1, true) then
            ends[#ends + 1] = { id, ARGV[j + 2], 'd' .. ARGV[j + 3] }
          end
          if string.find(kind, 'c', 1, true) then
            if kept then
              F.ended(id, now)
            else
              F.forget({ id })
            end
          end
        end
      end
      F.reportAll(ends, now)
    end

    -- Forget the flow data of these parents: their fields, each child's outcome, their end.
    function F.forget(parents)
      if #parents == 0 or redis.call('EXISTS', flowKey) == 0 then
        return
      end
      local names = {}
      for i = 1, #parents do
        names[i] = parents[i] .. ':c'
      end
      local lists, fields = bulkRead('HMGET', flowKey, names), {}
      for i = 1, #parents do
        local parent = parents[i]
        for _, what in ipairs({ ':n', ':c', ':d', ':u' }) do
          fields[#fields + 1] = parent .. what
        end
        if lists[i] then
          for _, child in ipairs(cjson.decode(lists[i])) do
            fields[#fields + 1] = parent .. ':r:' .. child[2]
          end
        end
      end
      bulk('HDEL', flowKey, fields)
      if redis.call('EXISTS', flowEndsKey) == 1 then
        bulk('ZREM', flowEndsKey, parents)
      end
    end

    -- Look at the `budget` parents that ended longest ago: the flow data of those no longer kept
    -- (neither done nor dead: trimmed, purged, retried or added again) goes; the others are looked
    -- at again last (a kept dead letter must not hide the ones after it). Returns how many went.
    function F.trim(now, budget)
      if budget <= 0 or redis.call('EXISTS', flowEndsKey) == 0 then
        return 0
      end
      local old = redis.call('ZRANGE', flowEndsKey, 0, budget - 1)
      local done = bulkRead('ZMSCORE', doneKey, old)
      local dead = bulkRead('ZMSCORE', deadKey, old)
      local gone, kept = {}, {}
      for i = 1, #old do
        if done[i] or dead[i] then
          kept[#kept + 1] = now
          kept[#kept + 1] = old[i]
        else
          gone[#gone + 1] = old[i]
        end
      end
      F.forget(gone)
      if #kept > 0 then
        bulk('ZADD', flowEndsKey, kept)
      end
      return #gone
    end

    return F
  end
end
