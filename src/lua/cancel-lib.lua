-- cancel-lib.lua: cancel.lua's own helpers for flows (flow-lib.lua): the loader puts this after
-- the group scripts' shared helpers in front of cancel.lua only.

-- Take a message out of the set it waits in: 'waiting' for a parent, true for a delayed or
-- ready one, false when it is not waiting anywhere (unknown, running or dead).
local function unqueue(id)
  if redis.call('ZREM', delayedKey, id) == 1 then
    return true
  end
  local due = redis.call('HGET', dueKey, id)
  if due then
    -- Active leases carry a token after a '/': those are being handled.
    return not string.find(due, '/', 1, true)
      and redis.call('ZREM', readyKey, readyMember(tonumber(due), id)) == 1
  end
  return redis.call('ZREM', waitingKey, id) == 1 and 'waiting'
end

-- Whether the message `id` here is a child of `parentGroup`'s `parent`, by its record's tag: a
-- child id the flow listed but could not store (another message held it) is someone else's.
local function childOf(id, parentGroup, parent)
  local ref = flow().tagsOf(redis.call('HGET', msgKey, id))
  if not ref then
    return false
  end
  local group, _, of = flow().parseRef(ref)
  return group == parentGroup and of == parent
end

-- Cancel a cancelled parent's children that have not ended: those in this slot at once (a
-- running one is left to finish), recursively; returns "<group>:<id>" of those elsewhere, each
-- followed by its parent's "<group>:<id>" (cancel.lua's 'cascade' checks it is theirs).
local function cancelChildren(parent, elsewhere)
  local list = redis.call('HGET', flowKey, parent .. ':c')
  if not list then
    return elsewhere
  end
  local children, fields = cjson.decode(list), {}
  for i, child in ipairs(children) do
    fields[i] = parent .. ':r:' .. child[2]
  end
  local outcomes = bulkRead('HMGET', flowKey, fields)
  for i, child in ipairs(children) do
    local group, id = child[1], child[2]
    if outcomes[i] == '' then
      if group ~= flow().group() then
        elsewhere[#elsewhere + 1] = group .. ':' .. id
        elsewhere[#elsewhere + 1] = flow().group() .. ':' .. parent
      elseif childOf(id, group, parent) then
        local was = unqueue(id)
        if was then
          publish('cancelled', { id }, nil, '')
          if was == 'waiting' then
            cancelChildren(id, elsewhere)
            flow().forget({ id })
          end
          forget({ id })
        end
      end
    end
  end
  return elsewhere
end

-- Whether cancelling a child (its ref) is refused: nil when allowed (optional, or its parent
-- here no longer waits); { 'refused', group, parent } when its parent here waits; { 'ask',
-- group, parent } when its parent is in another slot (the caller reads that one's state).
local function cancelRefusal(ref)
  local group, optional, parent = flow().parseRef(ref)
  if optional or not group then
    return nil
  end
  if group ~= flow().group() then
    return { 'ask', group, parent }
  end
  if redis.call('ZSCORE', waitingKey, parent) then
    return { 'refused', group, parent }
  end
  return nil
end
