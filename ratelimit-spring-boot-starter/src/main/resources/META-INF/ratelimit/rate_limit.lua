-- Rate limit check and refund: several limits, each enforced by its own algorithm, checked and consumed
-- all-or-nothing, atomically (one script run covers every limit of a request); the same script gives back the tokens
-- of an abandoned check.
--
-- KEYS[i]   state of limit i of one client in one endpoint group (all KEYS share one hash tag, so one Cluster slot)
-- ARGV[1]   operation: 'check' (check and consume) or 'refund' (give back the tokens of an allowed check that the
--           caller abandoned: it timed out and was decided without Redis, but Redis ran it anyway)
-- ARGV[2]   cost: tokens the request takes (integer >= 1; 0 reads the limits without consuming); for 'refund', the
--           tokens the abandoned check took from each limit
-- ARGV[3]   limit count n (= #KEYS)
-- then, per limit i = 1..n, four values, ARGV[4i], ARGV[4i+1], ARGV[4i+2], ARGV[4i+3]:
--           algorithm code, capacity (tokens, 1 .. 2^53), refill tokens (1 .. 2^53),
--           refill period (microseconds, >= 1000)
--   The algorithm codes:
--   tb    token bucket: capacity tokens, refilled continuously with refill tokens per refill period
--   swl   sliding window log: at most capacity tokens admitted in any window of one refill period (exact)
--   swc   sliding window counter: the same, estimated from two fixed-window counts (approximate)
--   fw    fixed window: at most capacity tokens per refill-period window, windows aligned to multiples of the period
--         since the Unix epoch
--   The window algorithms take capacity tokens per window; their refill tokens equal the capacity (not used here).
-- An unknown operation or algorithm code, or an argument count other than 3 + 4n, is an error reply before any write.
--
-- Time comes only from Redis TIME (microsecond precision): every gateway instance shares one clock. A clock stepping
-- back never makes room.
--
-- 'check' returns {allowed, then per limit: satisfied, remaining, retry_after_ms, reset_ms}, all integers:
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
-- 'refund' returns the number of limits whose state was changed (an integer); a limit whose state has expired is
-- left alone, and no TTL changes.
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

local now                             -- Redis time in microseconds, read once a check starts (a refund needs none)

local operation = ARGV[1]
local cost = tonumber(ARGV[2])
local n = tonumber(ARGV[3])

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
-- state and its TTL) and returns the whole tokens remaining and the ms until the whole capacity is available;
-- refund(l) gives cost tokens back to the stored state and returns 1, or 0 when there is no state to change.

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

-- The stored tokens are those at the stored time, so adding cost to them adds it now too; capped at capacity.
function tb.refund(l)
  local tk = tonumber(redis.call('HGET', KEYS[l.i], 'tk'))
  if tk == nil or tk ~= tk then return 0 end
  tk = tk + cost
  if tk > l.capacity then tk = l.capacity end
  redis.call('HSET', KEYS[l.i], 'tk', fmt(tk))
  return 1
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

-- Removes the cost newest entries of the log (the refunded check's, or ones admitted just after it: all count the
-- same, and removing the newest keeps every remaining entry's expiry).
function swl.refund(l)
  if cost > 0 and redis.call('ZCARD', KEYS[l.i]) > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[l.i], -cost, -1)
    return 1
  end
  return 0
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

-- Takes cost from the stored count, floored at 0 (the fixed window's too).
local function refund_count(l)
  local c = tonumber(redis.call('HGET', KEYS[l.i], 'c'))
  if c == nil or c ~= c then return 0 end
  c = c - cost
  if c < 0 then c = 0 end
  redis.call('HSET', KEYS[l.i], 'c', fmt(c))
  return 1
end

-- Takes cost from the latest window's count (where the check was counted, unless a window ended in between).
swc.refund = refund_count

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

-- Takes cost from the window's count.
fw.refund = refund_count

------------------------------------------------------------------------------------------------ check and refund
local ALGORITHMS = { tb = tb, swl = swl, swc = swc, fw = fw }

if operation ~= 'check' and operation ~= 'refund' then
  return redis.error_reply('ERR unknown rate limit operation \'' .. tostring(operation) .. '\'')
end
if n == nil or #ARGV ~= 3 + 4 * n then
  return redis.error_reply('ERR rate limit script takes 3 + 4n arguments (n = ' .. tostring(ARGV[3])
    .. ' limits), got ' .. #ARGV)
end
local limits = {}
for i = 1, n do
  local code = ARGV[4 * i]
  local algorithm = ALGORITHMS[code]
  if algorithm == nil then
    return redis.error_reply('ERR unknown rate limit algorithm code \'' .. code .. '\' for limit ' .. i)
  end
  limits[i] = { i = i, algorithm = algorithm, capacity = tonumber(ARGV[4 * i + 1]),
                refill = tonumber(ARGV[4 * i + 2]), period = tonumber(ARGV[4 * i + 3]) }
end

if operation == 'refund' then
  local refunded = 0
  for i = 1, n do
    refunded = refunded + limits[i].algorithm.refund(limits[i])
  end
  return refunded
end

local time = redis.call('TIME')
now = tonumber(time[1]) * 1000000 + tonumber(time[2])

local allowed = 1
for i = 1, n do
  local l = limits[i]
  l.algorithm.read(l)
  l.satisfied = l.algorithm.admits(l)
  if not l.satisfied then allowed = 0 end
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
