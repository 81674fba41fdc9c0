-- Gives back the tokens of a check that the caller abandoned (it timed out and was decided without Redis) but that
-- Redis ran anyway and allowed: without this, such a check would consume tokens for a request already decided.
-- Same KEYS and ARGV as token_bucket.lua: ARGV[1] cost, ARGV[2] n, then capacity, refill, period per limit.
-- The stored tokens are those at the stored time, so adding cost to them adds it now too; capped at capacity.
local cost = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local refunded = 0
for i = 1, n do
  local tk = tonumber(redis.call('HGET', KEYS[i], 'tk'))
  if tk ~= nil and tk == tk then
    local capacity = tonumber(ARGV[3 * i])
    tk = tk + cost
    if tk > capacity then tk = capacity end
    redis.call('HSET', KEYS[i], 'tk', string.format('%.17g', tk))
    refunded = refunded + 1
  end
end
return refunded
