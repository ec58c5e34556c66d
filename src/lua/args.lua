-- args.lua: the checks every script makes of its ARGV before anything else. The loader
-- puts this text first in each script (src/redis/scripts.ts, intake-scripts.ts), so a
-- script sees these locals as if it wrote them.
-- Redis keeps the writes a script made before it failed, so a script that trips over a
-- malformed argument half-way leaves a message half-moved (out of every set: lost). Each
-- script therefore checks all of its arguments before its first write, and refuses a
-- malformed call with one line that names the argument, what it must be and what came.
-- KEYS, ARGV: whatever the script's own header says; these helpers read ARGV.

-- Largest whole number a script takes anywhere (the latest due time, a count): past
-- 2^53 a Lua number no longer holds every whole number, and nothing skyq sends is near it.
local ARG_MAX = 9007199254740991

local function refuse(i, what)
  local got = ARGV[i]
  local shown = got == nil and 'nothing' or ('"' .. string.sub(got, 1, 40) .. (#got > 40 and '…"' or '"'))
  error({ err = 'ERR skyq: ARGV[' .. i .. '] ' .. what .. ', got ' .. shown })
end

-- The number of arguments: exactly `min` (max nil), or from min to max (max -1: no upper bound).
local function argCount(min, max)
  max = max or min
  if #ARGV < min or (max >= 0 and #ARGV > max) then
    local wanted = max == min and tostring(min) or (max < 0 and 'at least ' .. min or min .. ' to ' .. max)
    error({ err = 'ERR skyq: wrong number of arguments: ' .. wanted .. ' wanted, got ' .. #ARGV })
  end
end

-- A whole number from min to max (decimal digits, an optional minus sign).
local function argInt(i, what, min, max)
  local text = ARGV[i]
  local n = text and string.match(text, '^%-?%d+$') and tonumber(text)
  if not n or n < min or n > (max or ARG_MAX) then
    refuse(i, what .. ' must be a whole number from ' .. min .. ' to ' .. string.format('%d', max or ARG_MAX))
  end
  return n
end

-- '' or a whole number from min to max: nil for ''.
local function argOptionalInt(i, what, min, max)
  if ARGV[i] == '' then
    return nil
  end
  return argInt(i, what .. " ('' for none)", min, max)
end

-- A finite number (a score may have a fraction: seconds as the unit).
local function argNumber(i, what)
  local n = ARGV[i] and tonumber(ARGV[i])
  if not n or n ~= n or n == math.huge or n == -math.huge then
    refuse(i, what .. ' must be a finite number')
  end
  return n
end

-- A text that is not empty (an id, a token, a nonce).
local function argText(i, what)
  if ARGV[i] == nil or ARGV[i] == '' then
    refuse(i, what .. ' must not be empty')
  end
  return ARGV[i]
end

local function argOneOf(i, what, choices)
  for _, choice in ipairs(choices) do
    if ARGV[i] == choice then
      return choice
    end
  end
  refuse(i, what .. " must be '" .. table.concat(choices, "' or '") .. "'")
end

-- The score unit (ms per delayed-set score unit: ms 1, cs 10, s 1000; src/queue/config.ts).
local function argUnit(i)
  local unit = argInt(i, 'unit (ms per score unit)', 1, 1000)
  if unit ~= 1 and unit ~= 10 and unit ~= 1000 then
    refuse(i, 'unit (ms per score unit) must be 1, 10 or 1000')
  end
  return unit
end

-- Leases named from ARGV[first] to ARGV[last]: groups of token, count, that many ids, which
-- must end exactly at `last`. Returns how many ids they name. An id may be any bytes, even
-- empty: a member another program added is its own id.
local function argLeases(first, last)
  local i, ids = first, 0
  while i <= last do
    argText(i, 'lease token')
    local count = argInt(i + 1, 'count of ids under this token', 1, last - i - 1)
    ids = ids + count
    i = i + 2 + count
  end
  return ids
end

-- The events flag (events.lua setEvents): '1' on, '' off.
local function argEvents(i)
  return argOneOf(i, "events flag ('1' on, '' off)", { '1', '' })
end

-- An ack's flow section (flow-lib.lua flow.acked) at ARGV[at]: how many entries, then for
-- each a position among the `ids` acked, its kind, its parent ref and its result.
local function argFlowAcks(at, ids)
  local count = argInt(at, 'count of flow entries', 1, ids)
  if #ARGV ~= at + 4 * count then
    error({ err = 'ERR skyq: wrong number of arguments: ' .. (at + 4 * count) .. ' for '
      .. count .. ' flow entries (position, kind, parent ref, result), got ' .. #ARGV })
  end
  for j = at + 1, #ARGV, 4 do
    argInt(j, 'position of a flow entry', 1, ids)
    if argOneOf(j + 1, 'kind of a flow entry', { 'f', 'c', 'fc' }) ~= 'c'
        and not string.match(ARGV[j + 2], '^%d+:[om]:.') then
      refuse(j + 2, "a flow child's parent ref must be '<group>:<o|m>:<parent id>'")
    end
  end
end

-- An ack's arguments from ARGV[first] (history.lua ackLeased): the retention, the events
-- flag, how many lease arguments follow, the leases, then one result per id when kept and
-- one name per id when events are on, then the flow section when some ids are flow members.
local function argAcks(first)
  if #ARGV < first + 2 then
    argCount(first + 2, -1)
  end
  local retention = ARGV[first]
  if retention ~= '' and not string.match(retention, '^%d+:%d+$') then
    refuse(first, "retention must be '<count>:<age ms>' or ''")
  end
  local events = argEvents(first + 1)
  local leaseEnd = first + 2 + argInt(first + 2, 'count of lease arguments', 0, #ARGV - first - 2)
  local ids = argLeases(first + 3, leaseEnd)
  local wanted = (retention ~= '' and ids or 0) + (events == '1' and ids or 0)
  if ids > 0 and #ARGV - leaseEnd > wanted + 1 then
    argFlowAcks(leaseEnd + wanted + 1, ids)
  elseif #ARGV - leaseEnd ~= wanted then
    error({ err = 'ERR skyq: wrong number of arguments: ' .. (leaseEnd + wanted) .. ' for '
      .. ids .. ' acked ids (one result each when kept, one name each with events on), got ' .. #ARGV })
  end
end

-- Which dead letters (lib-ids.lua selectDead): '*' and how many of the oldest, or 'ids' and ids.
local function argDeadSelection()
  if argOneOf(1, 'selection', { '*', 'ids' }) == '*' then
    argCount(2)
    argInt(2, 'how many of the oldest', 1, 1000000)
    return
  end
  argCount(2, -1) -- ids: any bytes (a raw member's id is the member)
end
