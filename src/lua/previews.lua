-- previews.lua: the start of each long record, kept apart so that a page of previews
-- (list.lua, dead-list.lua) costs what its limit costs, whatever the bodies weigh: Redis
-- has no range read of a hash field, and an HGET copies the whole record into Lua.
-- The loader puts this text after lib.lua and lib-ids.lua (forget() drops previews) in
-- front of each group script.
--
-- Pre hash (`{prefix:g}:pre`, KEYS[26], format 8): id → the record cut to its header,
-- tags and kind and PREVIEW_BODY bytes of body, for records over PREVIEW_FROM bytes
-- (a spilled record's stub is short: its body key is read by GETRANGE instead). Written
-- with the record, dropped with it (forget); a finished job keeps it with its record.
-- A record without one (short, or stored before format 8) is read whole.
local PREVIEW_FROM = 2048
local PREVIEW_BODY = 1200 -- src/queue/browse/item.ts PREVIEW_BYTES: 300 characters of UTF-8
local TAGS_MAX = 512 -- a record's tags (a name, a schedule) are ~400 bytes at most

-- Where a record's body starts: after its header, its tags (lib.lua) and its kind letter;
-- nil for a stub (kind x: its body is in a key of its own) or a header that does not parse.
-- A tag this code does not know leaves TAGS_MAX bytes for the tags.
local function bodyStart(rec)
  local _, headerEnd = string.find(rec, '^[^|]*|[^|]*|[^|]*|[^|]*|')
  if not headerEnd then
    return nil
  end
  local at = headerEnd + 1
  for _ = 1, 4 do -- `n` a name, `p` a schedule, `f` a flow child's parent, `c` a flow parent
    local bytes, after = string.match(rec, '^[npfc](%d+):()', at)
    if not bytes then
      break
    end
    at = after + tonumber(bytes)
  end
  local kind = string.sub(rec, at, at)
  if kind == 'x' then
    return nil
  elseif not string.find('sjbr', kind, 1, true) or kind == '' then
    return headerEnd + TAGS_MAX + 1
  end
  return at + 1
end

-- A record cut to `bodyBytes` bytes of body; the record itself when it is not longer (or is
-- a stub, or does not parse).
local function previewCut(rec, bodyBytes)
  local at = bodyStart(rec)
  if not at or #rec < at + bodyBytes then
    return rec
  end
  return string.sub(rec, 1, at + bodyBytes - 1)
end

-- Keeps the previews of these records (id, record, id, record...) that are long.
local function keepPreviews(records)
  local kept = {}
  for i = 2, #records, 2 do
    local rec = records[i]
    if #rec > PREVIEW_FROM then
      local cut = previewCut(rec, PREVIEW_BODY)
      if #cut < #rec then
        kept[#kept + 1] = records[i - 1]
        kept[#kept + 1] = cut
      end
    end
  end
  if #kept > 0 then
    fill(preKey, kept)
  end
end

-- What a page shows of a record: its preview of `bodyBytes` (from the kept one when that is
-- long enough), and the record's size; false, 0 for an id with no record.
local anyPreviews = nil -- whether the pre hash exists, looked up once a call
local function previewRead(id, bodyBytes)
  if id == KEEP_FIELD then
    return false, 0 -- a member named like the placeholder field has no record
  end
  if anyPreviews == nil then
    anyPreviews = redis.call('EXISTS', preKey) == 1
  end
  if bodyBytes <= PREVIEW_BODY and anyPreviews then
    local kept = redis.call('HGET', preKey, id)
    if kept then
      return previewCut(kept, bodyBytes), redis.call('HSTRLEN', msgKey, id)
    end
  end
  local rec = redis.call('HGET', msgKey, id)
  if not rec then
    return false, 0
  end
  return previewCut(rec, bodyBytes), #rec
end
