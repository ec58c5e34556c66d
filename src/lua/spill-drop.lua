-- spill-drop.lua: delete the body keys of adds that failed or were sent again
-- (src/queue/spill.ts). Only nonces still in the spills set go: one no longer
-- listed was kept or dropped by its add.lua, which ran after all.
-- KEYS: the group's keys (lib.lua)
-- ARGV[1..] nonces
-- Returns the number of nonces given.
argCount(1, -1)
for i = 1, #ARGV do
  argText(i, 'nonce')
end
dropSpills(argvFrom(1))
return #ARGV
