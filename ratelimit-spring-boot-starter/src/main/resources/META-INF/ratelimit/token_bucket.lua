-- Token bucket, several limits checked and consumed all-or-nothing, atomically.
--
-- KEYS[i]   bucket i of one client in one endpoint group (all KEYS share one hash tag, so one Cluster slot)
-- ARGV[1]   cost: tokens the request takes (integer >= 1)
-- ARGV[2]   limit count n (= #KEYS)
-- then, per limit i = 1..n, three values:
--           capacity (tokens, 1 .. 2^53), refill tokens (1 .. 2^53), refill period (microseconds, >= 1000)
--
-- State per bucket: a hash {tk = tokens (float, may be fractional), ts = time of tk in microseconds}.
-- Time comes only from Redis TIME (microsecond precision): every gateway instance shares one clock.
-- Refill is continuous: tokens(t) = min(capacity, tk + (t - ts) * refill / period). A bucket whose key is missing
-- (never used, or expired) is full. Capacity shrinking in configuration clamps the stored tokens on next use.
--
-- Returns {allowed, then per limit: satisfied, remaining, retry_after_ms, reset_ms}, all integers:
--   allowed        1 if every limit held >= cost tokens (and cost was taken from each), else 0 (nothing taken)
--   satisfied      1 if this limit held >= cost tokens
--   remaining      whole tokens left after the decision (0 .. capacity)
--   retry_after_ms ms until this limit holds cost tokens (0 if satisfied); waiting exactly that long succeeds
--   reset_ms       ms until this bucket is full again
-- Written keys expire when their bucket would be full again (PEXPIRE), so idle clients cost no memory.

local MAX = 9007199254740992          -- 2^53: largest integer a double holds exactly; caps every output
local MAX_TTL_MS = 315360000000       -- 10 years: PEXPIRE ceiling (a bucket that takes longer to refill expires full)
local EPSILON = 1e-9                  -- tolerance in tokens against floating-point rounding of the refill product

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

local cost = tonumber(ARGV[1])
local n = tonumber(ARGV[2])

local tokens = {}
local base = {}      -- stored tokens of bucket i, or false when it is full (missing or corrupt state)
local since = {}     -- microseconds since that state was stored (>= 0)
local allowed = 1
for i = 1, n do
  local capacity = tonumber(ARGV[3 * i])
  local refill = tonumber(ARGV[3 * i + 1])
  local period = tonumber(ARGV[3 * i + 2])
  local state = redis.call('HMGET', KEYS[i], 'tk', 'ts')
  local tk = tonumber(state[1])
  local ts = tonumber(state[2])
  local available
  -- missing or corrupt state (nil, NaN, infinite) means a full bucket
  if tk == nil or ts == nil or tk ~= tk or ts ~= ts or tk == math.huge or tk == -math.huge or tk < 0 then
    base[i] = false
    available = capacity
  else
    local elapsed = now - ts
    if elapsed < 0 then elapsed = 0 end   -- clock stepped back (e.g. after a failover): no refill, no negative
    base[i] = tk
    since[i] = elapsed
    available = tk + elapsed * refill / period
    if available > capacity then available = capacity end
  end
  tokens[i] = available
  if available + EPSILON < cost then allowed = 0 end
end

-- Microseconds until bucket i holds cost tokens: the smallest whole w for which the refill formula above, evaluated
-- w microseconds later, admits the request (so waiting exactly the returned time succeeds despite float rounding).
local function wait_micros(i, refill, period)
  local function fits(w)
    return base[i] + (since[i] + w) * refill / period + EPSILON >= cost
  end
  local w = math.ceil((cost - tokens[i]) * period / refill)
  if w >= MAX then return MAX end
  if not base[i] then return w end   -- a full bucket short of cost: cost exceeds capacity, it never fits
  local steps = 0
  while w > 0 and steps < 3 and fits(w - 1) do w = w - 1; steps = steps + 1 end
  steps = 0
  while steps < 3 and not fits(w) do w = w + 1; steps = steps + 1 end
  return w
end

local result = { allowed }
for i = 1, n do
  local capacity = tonumber(ARGV[3 * i])
  local refill = tonumber(ARGV[3 * i + 1])
  local period = tonumber(ARGV[3 * i + 2])
  local available = tokens[i]
  local satisfied = 1
  local retry_ms = 0
  if available + EPSILON < cost then
    satisfied = 0
    retry_ms = math.ceil(wait_micros(i, refill, period) / 1000)
  end
  if allowed == 1 then
    available = available - cost
    if available < 0 then available = 0 end
  end
  local reset_ms = math.ceil(math.ceil((capacity - available) * period / refill) / 1000)
  if allowed == 1 then
    local ttl = reset_ms
    if ttl < 1 then ttl = 1 end
    if ttl > MAX_TTL_MS then ttl = MAX_TTL_MS end
    redis.call('HSET', KEYS[i], 'tk', string.format('%.17g', available), 'ts', string.format('%.17g', now))
    redis.call('PEXPIRE', KEYS[i], string.format('%.17g', ttl))
  end
  local remaining = math.floor(available + EPSILON)
  if remaining > capacity then remaining = capacity end
  if retry_ms > MAX then retry_ms = MAX end
  if reset_ms > MAX then reset_ms = MAX end
  result[#result + 1] = satisfied
  result[#result + 1] = remaining
  result[#result + 1] = retry_ms
  result[#result + 1] = reset_ms
end
return result
