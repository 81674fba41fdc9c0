-- Gives back the tokens of a check that the caller abandoned (it timed out and was decided without Redis) but that
-- Redis ran anyway and allowed: without this, such a check would consume tokens for a request already decided.
-- Same KEYS and ARGV as rate_limit.lua: ARGV[1] cost, ARGV[2] n, then capacity, refill, period per limit at ARGV[3i],
-- ARGV[3i+1], ARGV[3i+2], then the algorithm code of limit i at ARGV[3n+2+i] (missing: 'tb').
--   tb    the stored tokens are those at the stored time, so adding cost to them adds it now too; capped at capacity
--   swl   removes the cost newest entries of the log (the refunded check's, or ones admitted just after it: all count
--         the same, and removing the newest keeps every remaining entry's expiry)
--   swc   takes cost from the latest window's count (where the check was counted, unless a window ended in between)
--   fw    takes cost from the window's count
-- Returns the number of limits whose state was changed; a limit whose state has expired is left alone.
local cost = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local KNOWN = { tb = true, swl = true, swc = true, fw = true }
for i = 1, n do
  local code = ARGV[3 * n + 2 + i] or 'tb'
  if not KNOWN[code] then
    return redis.error_reply('ERR unknown rate limit algorithm code \'' .. code .. '\' for limit ' .. i)
  end
end
local refunded = 0
for i = 1, n do
  local key = KEYS[i]
  local code = ARGV[3 * n + 2 + i] or 'tb'
  if code == 'tb' then
    local tk = tonumber(redis.call('HGET', key, 'tk'))
    if tk ~= nil and tk == tk then
      local capacity = tonumber(ARGV[3 * i])
      tk = tk + cost
      if tk > capacity then tk = capacity end
      redis.call('HSET', key, 'tk', string.format('%.17g', tk))
      refunded = refunded + 1
    end
  elseif code == 'swl' then
    if cost > 0 and redis.call('ZCARD', key) > 0 then
      redis.call('ZREMRANGEBYRANK', key, -cost, -1)
      refunded = refunded + 1
    end
  else
    local c = tonumber(redis.call('HGET', key, 'c'))   -- 'swc' or 'fw'
    if c ~= nil and c == c then
      c = c - cost
      if c < 0 then c = 0 end
      redis.call('HSET', key, 'c', string.format('%.17g', c))
      refunded = refunded + 1
    end
  end
end
return refunded
