-- Rate limit check: several limits, each enforced by its own algorithm, checked and consumed all-or-nothing,
-- atomically (one script run covers every limit of a request).
--
-- KEYS[i]   state of limit i of one client in one endpoint group (all KEYS share one hash tag, so one Cluster slot)
-- ARGV[1]   cost: tokens the request takes (integer >= 1; 0 reads the limits without consuming)
-- ARGV[2]   limit count n (= #KEYS)
-- then, per limit i = 1..n, three values, ARGV[3i], ARGV[3i+1], ARGV[3i+2]:
--           capacity (tokens, 1 .. 2^53), refill tokens (1 .. 2^53), refill period (microseconds, >= 1000)
-- then, per limit i = 1..n, ARGV[3n+2+i]: the limit's algorithm code; optional, a missing code means 'tb':
--   tb    token bucket: capacity tokens, refilled continuously with refill tokens per refill period
--   swl   sliding window log: at most capacity tokens admitted in any window of one refill period (exact)
--   swc   sliding window counter: the same, estimated from two fixed-window counts (approximate)
--   fw    fixed window: at most capacity tokens per refill-period window, windows aligned to multiples of the period
--         since the Unix epoch
--   The window algorithms take capacity tokens per window; their refill tokens equal the capacity (not used here).
--
-- Time comes only from Redis TIME (microsecond precision): every gateway instance shares one clock. A clock stepping
-- back never makes room.
--
-- Returns {allowed, then per limit: satisfied, remaining, retry_after_ms, reset_ms}, all integers:
--   allowed        1 if every limit admitted cost tokens (and cost was taken from each), else 0 (nothing taken)
--   satisfied      1 if this limit alone admitted cost tokens
--   remaining      whole tokens this limit would still admit now, after the decision (0 .. capacity)
--   retry_after_ms ms until this limit admits cost tokens (0 if satisfied): the smallest wait for which the same
--                  admission rule, evaluated that much later, admits the request, so waiting exactly the returned time
--                  succeeds (if nothing else consumes meanwhile)
--   reset_ms       ms until this limit has its whole capacity available again
-- Only an allowed request writes. Every written key gets a TTL (PEXPIRE) that ends when its state no longer matters
-- (the bucket is full again, the log's newest entry has left the window, the counter no longer weighs, the window
-- is over), so idle clients cost no memory.
--
-- State, in key KEYS[i] (the key names differ per algorithm, so one algorithm never reads another's state):
--   tb    hash {tk = tokens at time ts (float, may be fractional), ts = microseconds}
--   swl   sorted set: one member per admitted token, scored with its admission time (microseconds)
--   swc   hash {w = start of the current window (microseconds), c = tokens admitted in it,
--               p = tokens admitted in the window before it}
--   fw    hash {w = start of the window (microseconds), c = tokens admitted in it}
-- Missing or corrupt state (nil, NaN, infinite, negative) is an unused limit: a full bucket, an empty window.

local MAX = 9007199254740992          -- 2^53: largest integer a double holds exactly; caps every output
local MAX_TTL_MS = 315360000000       -- 10 years: PEXPIRE ceiling (a bucket that takes longer to refill expires full)
local EPSILON = 1e-9                  -- tolerance in tokens against floating-point rounding of fractional tokens
local LOG_BATCH = 500                 -- sorted-set members per ZADD call (Lua's unpack has a stack limit)

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

local cost = tonumber(ARGV[1])
local n = tonumber(ARGV[2])

local function fmt(x)
  return string.format('%.17g', x)
end

local function usable(x)   -- a finite number >= 0
  return x ~= nil and x == x and x ~= math.huge and x >= 0
end

local function expire(i, ttl)
  if ttl < 1 then ttl = 1 end
  if ttl > MAX_TTL_MS then ttl = MAX_TTL_MS end
  redis.call('PEXPIRE', KEYS[i], fmt(ttl))
end

-- Each algorithm: read(l) loads limit l's state; admits(l) tells whether it admits cost tokens now; wait(l) gives the
-- microseconds until it does (called only when it does not); finish(l, allowed) consumes when allowed (writing the
-- state and its TTL) and returns the whole tokens remaining and the ms until the whole capacity is available.

---------------------------------------------------------------------------------------------------- token bucket
-- Refill is continuous: tokens(t) = min(capacity, tk + (t - ts) * refill / period). Capacity shrinking in
-- configuration clamps the stored tokens on next use.
local tb = {}

function tb.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'tk', 'ts')
  local tk = tonumber(state[1])
  local ts = tonumber(state[2])
  if tk == nil or ts == nil or tk ~= tk or ts ~= ts or tk == math.huge or tk == -math.huge or tk < 0 then
    l.base = false          -- full bucket
    l.available = l.capacity
  else
    local elapsed = now - ts
    if elapsed < 0 then elapsed = 0 end   -- clock stepped back (e.g. after a failover): no refill, no negative
    l.base = tk
    l.since = elapsed
    local available = tk + elapsed * l.refill / l.period
    if available > l.capacity then available = l.capacity end
    l.available = available
  end
end

function tb.admits(l)
  return l.available + EPSILON >= cost
end

-- The smallest whole w for which the refill formula above, evaluated w microseconds later, admits the request (so
-- waiting exactly the returned time succeeds despite float rounding).
function tb.wait(l)
  local function fits(w)
    return l.base + (l.since + w) * l.refill / l.period + EPSILON >= cost
  end
  local w = math.ceil((cost - l.available) * l.period / l.refill)
  if w >= MAX then return MAX end
  if not l.base then return w end   -- a full bucket short of cost: cost exceeds capacity, it never fits
  local steps = 0
  while w > 0 and steps < 3 and fits(w - 1) do w = w - 1; steps = steps + 1 end
  steps = 0
  while steps < 3 and not fits(w) do w = w + 1; steps = steps + 1 end
  return w
end

function tb.finish(l, allowed)
  local available = l.available
  if allowed == 1 then
    available = available - cost
    if available < 0 then available = 0 end
  end
  local reset_ms = math.ceil(math.ceil((l.capacity - available) * l.period / l.refill) / 1000)
  if allowed == 1 then
    redis.call('HSET', KEYS[l.i], 'tk', fmt(available), 'ts', fmt(now))
    expire(l.i, reset_ms)
  end
  return math.floor(available + EPSILON), reset_ms
end

---------------------------------------------------------------------------------------------- sliding window log
-- An entry admitted at time s counts while now < s + period. Members are named after their score ('<s>', then
-- '<s>:2' .. '<s>:<cost>'), and each admission is scored strictly after the newest entry (normally now; 1 us later
-- if another request got the same microsecond, later still if the clock stepped back), so members are unique.
local swl = {}

function swl.read(l)
  local key = KEYS[l.i]
  l.boundary = now - l.period   -- entries scored at or before it have left the window
  l.count = 0                   -- entries inside the window
  l.expired = 0                 -- entries that have left it (still stored until the next admission trims them)
  l.newest = nil                -- score of the newest entry
  local total = redis.call('ZCARD', key)
  if total > 0 then
    l.count = redis.call('ZCOUNT', key, '(' .. fmt(l.boundary), '+inf')
    l.expired = total - l.count
    if l.count > 0 then
      l.newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    end
  end
end

function swl.admits(l)
  return cost <= l.capacity - l.count
end

-- The k oldest entries of the window must leave it (k = count + cost - capacity): that happens when the k-th oldest,
-- scored s, does, at now' = s + period. Integers below 2^53: exact.
function swl.wait(l)
  local k = l.count + cost - l.capacity
  if k > l.count then return MAX end   -- cost exceeds capacity: it never fits
  local rank = l.expired + k - 1
  local s = tonumber(redis.call('ZRANGE', KEYS[l.i], rank, rank, 'WITHSCORES')[2])
  return s + l.period - now
end

function swl.finish(l, allowed)
  local used = l.count
  local newest = l.newest
  if allowed == 1 and cost > 0 then
    local key = KEYS[l.i]
    if l.expired > 0 then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(l.boundary))
    end
    local t = now
    if newest ~= nil and newest >= t then t = newest + 1 end
    local score = fmt(t)
    local batch = {}
    for j = 1, cost do
      batch[#batch + 1] = score
      batch[#batch + 1] = (j == 1) and score or (score .. ':' .. j)
      if #batch >= 2 * LOG_BATCH then
        redis.call('ZADD', key, unpack(batch))
        batch = {}
      end
    end
    if #batch > 0 then redis.call('ZADD', key, unpack(batch)) end
    used = used + cost
    newest = t
    expire(l.i, math.ceil((t + l.period - now) / 1000))
  end
  local reset_ms = 0
  if used > 0 then reset_ms = math.ceil((newest + l.period - now) / 1000) end
  return l.capacity - used, reset_ms
end

------------------------------------------------------------------------------------------ sliding window counter
-- Cloudflare's approximation: estimate(t) = weighted + current, where start is the start of t's window, current the
-- tokens admitted in it, previous those admitted in the window before, and weighted = previous * (period -
-- (t - start)) / period rounded to the nearest whole token (unrounded, a client at its limit would lose about one
-- token per window: the weight left at a window's last requests blocks the last token). Admits when
-- estimate + cost <= capacity, compared as weighted <= capacity - current - cost (exact for integers up to 2^53, where
-- a sum could round). The estimate only falls as time passes (it is continuous at window edges).
local swc = {}

function swc.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'w', 'c', 'p')
  local w = tonumber(state[1])
  local c = tonumber(state[2])
  local p = tonumber(state[3])
  if usable(w) and usable(c) and usable(p) then
    l.w = w; l.c = c; l.p = p
  else
    l.w = nil; l.c = 0; l.p = 0
  end
end

-- The counts as seen at time t: t (moved up to the stored window's start if the clock stepped back behind it), the
-- start of t's window, the previous window's count and the current one's.
local function swc_view(l, t)
  if l.w ~= nil and l.w > t then t = l.w end
  local start = t - math.fmod(t, l.period)
  local previous, current = 0, 0
  if l.w == start then
    previous = l.p; current = l.c
  elseif l.w == start - l.period then
    previous = l.c
  end
  return t, start, previous, current
end

local function swc_weighted(l, previous, at, start)
  return math.floor(previous * (l.period - (at - start)) / l.period + 0.5)
end

local function swc_fits(l, t)
  local at, start, previous, current = swc_view(l, t)
  return swc_weighted(l, previous, at, start) <= l.capacity - current - cost
end

function swc.admits(l)
  return swc_fits(l, now)
end

-- Closed form for the first time the estimate leaves room for cost (in this window while the previous window's
-- weight can make the room: previous * (period - e) / period < room + 1/2; else in the next one, where the current
-- count becomes the previous, with room capacity - cost), then the same correction as the token bucket's: the
-- smallest whole w for which swc_fits(now + w) holds.
function swc.wait(l)
  if cost > l.capacity then return MAX end
  local _, start, previous, current = swc_view(l, now)
  local room = l.capacity - cost - current
  local target
  if room >= 0 and previous > 0 then
    target = start + math.floor(l.period * (previous - room - 0.5) / previous) + 1
  elseif room >= 0 then
    target = now
  else
    local next_room = l.capacity - cost
    target = start + l.period + math.floor(l.period * (current - next_room - 0.5) / current) + 1
  end
  local w = target - now
  if w < 0 then w = 0 end
  local steps = 0
  while w > 0 and steps < 3 and swc_fits(l, now + w - 1) do w = w - 1; steps = steps + 1 end
  steps = 0
  while steps < 3 and not swc_fits(l, now + w) do w = w + 1; steps = steps + 1 end
  return w
end

-- The first time a window's count, weighing as the previous window's in the window starting at next_start, rounds
-- to 0: count * (period - e) / period < 1/2.
local function swc_weightless_at(l, count, next_start)
  local t = next_start + math.floor(l.period * (count - 0.5) / count) + 1
  local steps = 0
  while steps < 3 and swc_weighted(l, count, t, next_start) > 0 do t = t + 1; steps = steps + 1 end
  return t
end

function swc.finish(l, allowed)
  local at, start, previous, current = swc_view(l, now)
  -- the whole capacity is back once the latest non-zero count no longer weighs
  local full_at = now
  if current > 0 then
    full_at = swc_weightless_at(l, current, start + l.period)
  elseif previous > 0 then
    full_at = swc_weightless_at(l, previous, start)
  end
  if allowed == 1 and cost > 0 then
    current = current + cost
    full_at = swc_weightless_at(l, current, start + l.period)
    redis.call('HSET', KEYS[l.i], 'w', fmt(start), 'c', fmt(current), 'p', fmt(previous))
    expire(l.i, math.ceil((full_at - now) / 1000))
  end
  local reset_us = full_at - now
  if reset_us < 0 then reset_us = 0 end
  return l.capacity - current - swc_weighted(l, previous, at, start), math.ceil(reset_us / 1000)
end

---------------------------------------------------------------------------------------------------- fixed window
local fw = {}

function fw.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'w', 'c')
  local w = tonumber(state[1])
  local c = tonumber(state[2])
  if not (usable(w) and usable(c)) then w = nil; c = 0 end
  local t = now
  if w ~= nil and w > t then t = w end   -- clock stepped back behind the stored window: still that window
  l.start = t - math.fmod(t, l.period)
  if w == l.start then l.used = c else l.used = 0 end
end

function fw.admits(l)
  return cost <= l.capacity - l.used   -- not used + cost: that sum could round above 2^53
end

-- Nothing changes before the next window starts; then the count is 0. Exact.
function fw.wait(l)
  if cost > l.capacity then return MAX end
  return l.start + l.period - now
end

function fw.finish(l, allowed)
  if allowed == 1 and cost > 0 then
    l.used = l.used + cost
    redis.call('HSET', KEYS[l.i], 'w', fmt(l.start), 'c', fmt(l.used))
    expire(l.i, math.ceil((l.start + l.period - now) / 1000))
  end
  local reset_ms = 0
  if l.used > 0 then reset_ms = math.ceil((l.start + l.period - now) / 1000) end
  return l.capacity - l.used, reset_ms
end

----------------------------------------------------------------------------------------------------------- check
local ALGORITHMS = { tb = tb, swl = swl, swc = swc, fw = fw }

local limits = {}
local allowed = 1
for i = 1, n do
  local code = ARGV[3 * n + 2 + i] or 'tb'
  local algorithm = ALGORITHMS[code]
  if algorithm == nil then
    return redis.error_reply('ERR unknown rate limit algorithm code \'' .. code .. '\' for limit ' .. i)
  end
  local l = { i = i, algorithm = algorithm, capacity = tonumber(ARGV[3 * i]), refill = tonumber(ARGV[3 * i + 1]),
              period = tonumber(ARGV[3 * i + 2]) }
  algorithm.read(l)
  l.satisfied = algorithm.admits(l)
  if not l.satisfied then allowed = 0 end
  limits[i] = l
end

local result = { allowed }
for i = 1, n do
  local l = limits[i]
  local satisfied = 1
  local retry_ms = 0
  if not l.satisfied then
    satisfied = 0
    retry_ms = math.ceil(l.algorithm.wait(l) / 1000)
  end
  local remaining, reset_ms = l.algorithm.finish(l, allowed)
  if remaining > l.capacity then remaining = l.capacity end
  if remaining < 0 then remaining = 0 end
  if retry_ms > MAX then retry_ms = MAX end
  if reset_ms > MAX then reset_ms = MAX end
  result[#result + 1] = satisfied
  result[#result + 1] = remaining
  result[#result + 1] = retry_ms
  result[#result + 1] = reset_ms
end
return result
