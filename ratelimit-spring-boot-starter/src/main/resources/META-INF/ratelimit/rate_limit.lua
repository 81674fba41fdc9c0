-- Rate limit check, lease and refund, and concurrency slots: several limits, each enforced by its own algorithm,
-- checked and consumed all-or-nothing, atomically (one script run covers every limit of a request); the same script
-- takes token leases, gives back the tokens of an abandoned check and gives back a request's concurrency slots.
--
-- KEYS[i]   state of limit i of one client in one endpoint group, i = 1 .. n (all KEYS share one hash tag, so one
--           Cluster slot); then one more key per concurrency limit, in the order of those limits: the limit's hold
--           statistics (KEYS[n + j] for the j-th concurrency limit)
-- ARGV[1]   operation: 'check' (check and consume), 'acquire' (check and consume, and take a slot in every
--           concurrency limit), 'lease' (check and consume, and take a lease of extra tokens for the instance to
--           spend locally, giving back its previous lease; token buckets only), 'refund' (give back the tokens of an
--           allowed check that the caller abandoned: it timed out and was decided without Redis, but Redis ran it
--           anyway), 'release' (give back the slot of a request that completed in every concurrency limit, its hold
--           time counted into the average, and refund tokens) or 'abandon' (the same for a slot the request never
--           used: an abandoned or compensated check, a shutdown; its hold time is not counted)
-- ARGV[2]   cost: tokens the request takes (integer >= 1; 0 reads the limits without consuming); for 'refund',
--           'release' and 'abandon', the tokens to give back to each rate limit (0 for none). A concurrency limit
--           counts one slot per request, whatever the cost.
-- ARGV[3]   limit count n (= the number of limits; KEYS holds n plus the number of concurrency limits)
-- 'acquire', 'release' and 'abandon' only, ARGV[4]: the slot's id, unique per request and instance
-- 'lease' only, ARGV[4..8]: tokens wanted for the lease (>= 0; granted at most half of what every limit holds after
--           the request), the lease's duration (microseconds; the same for the previous lease, whose start is its end
--           less it), then the instance's previous lease of these limits: tokens it was granted, tokens of it left
--           unspent, and its end (Redis time, microseconds, as this script returned it; all three 0 when there is none).
--           The unspent tokens come back only while the previous lease runs (Redis time before its end); a lease given
--           back at or after its end gives nothing back, its reservation only is released. A lease given back alone
--           (cost 0, nothing wanted) under limits that read a bucket beyond empty (not that bucket's last limits)
--           leaves that bucket as stored: nothing back, the reservation kept until it ends
-- then, per limit, four values (from ARGV[4], ARGV[5] for 'acquire', 'release' and 'abandon', ARGV[9] for 'lease'):
--           algorithm code, capacity (tokens, 1 .. 2^53), refill tokens (1 .. 2^53),
--           refill period (microseconds, >= 1000)
--   The algorithm codes:
--   tb    token bucket: capacity tokens, refilled continuously with refill tokens per refill period
--   swl   sliding window log: at most capacity tokens admitted in any window of one refill period (exact)
--   swc   sliding window counter: the same, estimated from two fixed-window counts (approximate)
--   fw    fixed window: at most capacity tokens per refill-period window, windows aligned to multiples of the period
--         since the Unix epoch
--   cc    concurrency: at most capacity requests in flight (slots taken by 'acquire' and not yet given back by
--         'release'); a slot not given back frees itself once it is one refill period old (the longest a request may
--         run: its instance died)
--   The window algorithms take capacity tokens per window, and a concurrency limit capacity slots; their refill
--   tokens equal the capacity (not used here).
-- An unknown operation or algorithm code (a window or concurrency limit in a lease, a concurrency limit in a 'check'
-- of cost > 0), an argument count other than 3 + 4n (4 + 4n for 'acquire', 'release' and 'abandon', 8 + 4n for
-- 'lease') or a key count other than n plus the concurrency limits is an error reply before any write.
--
-- Time comes only from Redis TIME (microsecond precision): every gateway instance shares one clock. A clock stepping
-- back never makes room at once (a window stays the stored one; a token bucket gets no refill); a token bucket within
-- the step of empty is stored as empty at the earlier time, so it may regain at most the step's refill once the
-- clock has caught up.
--
-- 'check' and 'acquire' return {allowed, then per limit: satisfied, remaining, retry_after_ms, reset_ms}, integers:
--   allowed        1 if every limit admitted cost tokens (and cost was taken from each, and a slot from each
--                  concurrency limit), else 0 (nothing taken)
--   satisfied      1 if this limit alone admitted cost tokens (a concurrency limit: a free slot)
--   remaining      whole tokens this limit would still admit now, after the decision (0 .. capacity); after a lease,
--                  without the leased tokens; a concurrency limit: free slots
--   retry_after_ms ms until this limit admits cost tokens (0 if satisfied): the smallest wait for which the same
--                  admission rule, evaluated that much later, admits the request, so waiting exactly the returned time
--                  succeeds (if nothing else consumes meanwhile). A concurrency limit: an estimate (see cc.wait)
--   reset_ms       ms until this limit has its whole capacity available again (a concurrency limit: at the latest,
--                  when the newest slot expires)
-- 'lease' returns the same, then the tokens leased (0 .. wanted, the same from every limit, 0 when denied) and the
--   lease's end (Redis time, microseconds; 0 when nothing was leased): the instance spends the leased tokens until
--   then at most, and sends the three numbers of its lease back with its next 'lease' call (or alone, with cost 0
--   and nothing wanted, when it drops the lease).
-- Only an allowed request (or a returned lease, or a token bucket read beyond empty by a call of cost >= 1, or a
-- released slot) writes. Every written key gets a TTL that ends when its state no longer matters (the bucket is full
-- again, the log's newest entry has left the window, the counter no longer weighs, the window is over, the newest slot
-- has expired, the hold statistics are an hour unused), so idle clients cost no memory.
-- 'refund' returns the number of limits whose state was changed (an integer); a limit whose state has expired is
-- left alone, and no TTL changes. 'release' and 'abandon' return the same, a concurrency limit counting when it held
-- the slot and the slot had not expired.
--
-- State, in key KEYS[i] (the key names differ per algorithm, so one algorithm never reads another's state):
--   tb    string: tat (integer microseconds, see the token bucket below); 'tat:reserved:until:since' while leases
--         are out
--         (a hash {tk, ts}, the layout before, is read and replaced on the next write)
--   swl   sorted set: one member per admitted token, scored with its admission time (microseconds)
--   swc   hash {w = start of the current window (microseconds), c = tokens admitted in it,
--               p = tokens admitted in the window before it}
--   fw    hash {w = start of the window (microseconds), c = tokens admitted in it}
--   cc    sorted set: one member per slot taken (its id), scored with the time it was taken (microseconds); and in
--         KEYS[n + j], a hash {h = the average time a slot was held (microseconds, a moving average)}
-- Missing or corrupt state (nil, NaN, infinite, negative) is an unused limit: a full bucket, an empty window, no
-- slot taken.

local MAX = 9007199254740992          -- 2^53: largest integer a double holds exactly; caps every output
local MAX_TTL_MS = 315360000000       -- 10 years: PEXPIRE ceiling (a bucket that takes longer to refill expires full)
local EPSILON = 1e-9                  -- tolerance in tokens against floating-point rounding of fractional tokens
local LOG_BATCH = 500                 -- sorted-set members per ZADD call (Lua's unpack has a stack limit)
local HOLD_WEIGHT = 0.125             -- weight of the newest hold time in a concurrency limit's moving average
local HOLD_TTL_MS = 3600000           -- hold statistics are kept an hour after the last release (or a refill period)
local UNKNOWN_HOLD_WAIT = 1000000     -- retry estimate (us) of a concurrency limit with no hold time measured yet

local now                             -- Redis time in microseconds, read once a check starts (a refund needs none)

local operation = ARGV[1]
local cost = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local slot                            -- 'acquire' and 'release': the slot's id

local function fmt(x)
  return string.format('%.17g', x)
end

-- The reply of a redis.pcall that read a key of another type (WRONGTYPE) is the layout before or a foreign key; any
-- other error (an ACL user without the command or the key: "can't run this command", "can't access ... keys") is
-- raised, so that a missing permission fails the check instead of reading as a full bucket.
local function wrong_type(reply)
  if string.find(reply.err, 'WRONGTYPE', 1, true) == nil then error(reply) end
  return true
end

local function usable(x)   -- a finite number >= 0
  return x ~= nil and x == x and x ~= math.huge and x >= 0
end

local function expire(i, ttl)   -- KEYS[i]'s TTL (ms)
  if ttl < 1 then ttl = 1 end
  if ttl > MAX_TTL_MS then ttl = MAX_TTL_MS end
  redis.call('PEXPIRE', KEYS[i], fmt(ttl))
end

local function put(i, value, ttl)   -- a string value and its TTL (ms), in one call
  if ttl < 1 then ttl = 1 end
  if ttl > MAX_TTL_MS then ttl = MAX_TTL_MS end
  redis.call('SET', KEYS[i], value, 'PX', fmt(ttl))
end

-- Each algorithm: read(l) loads limit l's state; admits(l) tells whether it admits cost tokens now; wait(l) gives the
-- microseconds until it does (called only when it does not); finish(l, allowed) consumes when allowed (writing the
-- state and its TTL) and returns the whole tokens remaining and the ms until the whole capacity is available;
-- refund(l) gives cost tokens back to the stored state and returns 1, or 0 when there is no state to change.

---------------------------------------------------------------------------------------------------- token bucket
-- GCRA form (the generic cell rate algorithm, ITU-T I.371, the "virtual scheduling" form): the state is one number,
-- tat, the "theoretical arrival time" (microseconds) at which the bucket is full again. Each token takes
-- interval = period / refill microseconds to refill, and the bucket may run at most tau = capacity * interval ahead
-- of now, so at time t it holds capacity - max(0, tat - t) / interval tokens: the same bucket as
-- tokens(t) = min(capacity, tokens(s) + (t - s) * refill / period), refilled continuously, kept in one integer.
-- Taking c tokens at t sets tat = max(tat, t) + c * interval; stored tat is rounded up to whole microseconds (a request
-- is charged at most 1 us of refill more than the exact bucket). A tat beyond now + tau (the rate or capacity changed
-- in configuration, or the clock stepped back) is an empty bucket, stored as such by a call that takes tokens (a call
-- of cost 0 leaves it as stored): never a negative one, never room made. A changed rate or capacity thus reads the
-- bucket's time until full at the new rate, at most the new fill time.
--
-- Leases (operation 'lease', below): tokens an instance takes ahead and spends locally. While leases are out, the
-- bucket cannot refill past the tokens they reserve: the stored value is 'tat:reserved:until:since', and until Redis
-- time `until` the bucket holds at most capacity - reserved (tat is read as at least t + reserved * interval). So at every
-- moment the tokens left in Redis plus the unspent leased tokens are at most capacity, and no interval admits more
-- than capacity + refill over it, leases or not. At `until` (the end of the latest lease) the reserved tokens count as
-- spent then, and refill from there. A lease given back leaves the reservation with its tokens counted as spent at
-- that moment (so the bucket never gains at once), and its unspent tokens come back only while it runs: from its end
-- on they can no longer be spent, and what the bucket refilled since is real, so returning them then would admit
-- more than the bound.
local tb = {}

local function tb_reserved_floor(l, t)   -- the lowest tat the reservation allows at time t (t >= now)
  local f = t
  if f > l.reserved_until then f = l.reserved_until end
  return f + l.reserved * l.interval
end

-- tat as seen at time t >= now: the stored one, raised to the reservation's floor, at least t (a full bucket)
local function tb_tat_at(l, t)
  local tat = l.tat
  if l.reserved > 0 then
    local floor = tb_reserved_floor(l, t)
    if floor > tat then tat = floor end
  end
  if tat < t then tat = t end
  return tat
end

local function tb_fits(l, t)
  return l.capacity - (tb_tat_at(l, t) - t) / l.interval + EPSILON >= cost
end

-- Parses the stored value: 'tat' or 'tat:reserved:until:since'. A hash (the layout before the GCRA form: tokens tk at time
-- ts) is converted; anything else unusable is a full bucket.
function tb.read(l)
  l.interval = l.period / l.refill
  l.tau = l.capacity * l.interval
  l.tat = now
  l.reserved = 0
  l.reserved_until = 0
  l.reserved_since = 0      -- when the first lease of the reservation was taken
  local value = redis.pcall('GET', KEYS[l.i])
  if type(value) == 'string' then
    local tat, reserved, reserved_until, reserved_since = string.match(value, '^([^:]+):([^:]+):([^:]+):([^:]+)$')
    if tat == nil then tat = value end
    tat = tonumber(tat)
    reserved = tonumber(reserved)
    reserved_until = tonumber(reserved_until)
    reserved_since = tonumber(reserved_since)
    if usable(tat) then l.tat = tat end
    if usable(reserved) and usable(reserved_until) and usable(reserved_since) and reserved > 0 then
      if now < reserved_until then
        l.reserved = reserved
        l.reserved_until = reserved_until
        l.reserved_since = reserved_since
      else
        -- every lease has ended: its tokens count as spent at its end
        local spent_until = reserved_until + reserved * l.interval
        if spent_until > l.tat then l.tat = spent_until end
      end
    end
  elseif type(value) == 'table' and value.err ~= nil and wrong_type(value) then
    -- not a string: the hash of the layout before, or another type (a full bucket, overwritten on the next write)
    local state = redis.pcall('HMGET', KEYS[l.i], 'tk', 'ts')
    local tk, ts
    if state.err == nil then
      tk = tonumber(state[1])
      ts = tonumber(state[2])
    else
      wrong_type(state)
    end
    if usable(tk) and usable(ts) then
      local elapsed = now - ts
      if elapsed < 0 then elapsed = 0 end
      local tokens = tk + elapsed * l.refill / l.period
      if tokens < l.capacity then l.tat = now + (l.capacity - tokens) * l.interval end
    end
  end
  if l.tat > now + l.tau then
    -- beyond an empty bucket (the rate or capacity changed, or the clock stepped back): empty, stored so by a call
    -- that takes tokens even if the request is denied, so the bucket refills at its new rate from now; a call that
    -- takes nothing (a read, a lease given back) runs under limits other than the bucket's last ones (a stale
    -- instance): storing the clamp would make room those limits never refilled, so it leaves the bucket as stored
    l.tat = now + l.tau
    l.clamped = true
    if cost > 0 then l.changed = true end
  end
  l.available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
end

function tb.admits(l)
  return l.available + EPSILON >= cost
end

-- The time the bucket is full again (us), with the reservation counted as spent at its end.
local function tb_full_at(l)
  local full_at = l.tat
  if l.reserved > 0 then
    local after = l.reserved_until + l.reserved * l.interval
    if after > full_at then full_at = after end
  end
  if full_at < now then full_at = now end
  return full_at
end

-- The smallest whole w for which the admission rule above, evaluated w microseconds later, admits the request (so
-- waiting exactly the returned time succeeds despite float rounding). tat_at(t) - t never grows with t, so the rule,
-- once true, stays true.
function tb.wait(l)
  if cost > l.capacity then return MAX end
  local w = math.ceil(tb_tat_at(l, now) + cost * l.interval - l.tau - now)
  if w < 0 then w = 0 end
  if l.reserved > 0 and not tb_fits(l, now + w) then
    -- the reservation holds the room until the leases end
    local w2 = math.ceil(tb_full_at(l) + cost * l.interval - l.tau - now)
    if w2 > w then w = w2 end
  end
  if w >= MAX then return MAX end
  local steps = 0
  while w > 0 and steps < 3 and tb_fits(l, now + w - 1) do w = w - 1; steps = steps + 1 end
  steps = 0
  while steps < 3 and not tb_fits(l, now + w) do w = w + 1; steps = steps + 1 end
  return w
end

-- Takes tokens now: raises tat past the reservation's floor first, so the new tokens stack on the reserved ones.
local function tb_take(l, tokens)
  l.tat = tb_tat_at(l, now) + tokens * l.interval
end

local function tb_write(l)
  local full_at = tb_full_at(l)
  local value = fmt(math.ceil(l.tat))
  if l.reserved > 0 then
    value = value .. ':' .. fmt(l.reserved) .. ':' .. fmt(l.reserved_until) .. ':' .. fmt(l.reserved_since)
  end
  put(l.i, value, math.ceil((full_at - now) / 1000))
end

function tb.finish(l, allowed)
  if allowed == 1 and cost > 0 then
    tb_take(l, cost)
    l.changed = true
  end
  if l.changed then tb_write(l) end
  local available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
  if available < 0 then available = 0 end
  return math.floor(available + EPSILON), math.ceil((tb_full_at(l) - now) / 1000)
end

-- The cost goes back to the stored tat (a full bucket stays full); the TTL is kept.
function tb.refund(l)
  local value = redis.pcall('GET', KEYS[l.i])
  if type(value) == 'table' and value.err ~= nil then wrong_type(value) end
  if type(value) ~= 'string' then return 0 end
  local tat, rest = string.match(value, '^([^:]+)(.*)$')
  tat = tonumber(tat)
  if not usable(tat) then return 0 end
  tat = math.ceil(tat - cost * l.period / l.refill)
  redis.call('SET', KEYS[l.i], fmt(tat) .. rest, 'KEEPTTL')
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

----------------------------------------------------------------------------------------------------- concurrency
-- A slot taken at time s counts while now < s + period (the longest a request may hold it); 'release' removes it at
-- once. The slot ids are chosen by the caller, unique per request. A request needs one slot whatever its cost (none
-- for a read, cost 0). The hold statistics key keeps a moving average of how long slots were held before 'release'
-- (each new hold weighs HOLD_WEIGHT, the weight of TCP's smoothed round-trip time, RFC 6298), for the retry estimate.
local cc = {}

local function cc_needed()
  if cost > 0 then return 1 end
  return 0
end

function cc.read(l)
  l.boundary = now - l.period   -- slots taken at or before it have expired
  l.count = redis.call('ZCOUNT', KEYS[l.i], '(' .. fmt(l.boundary), '+inf')
end

function cc.admits(l)
  return l.count + cc_needed() <= l.capacity
end

-- An estimate, not a promise (a slot frees when a request completes, which no rule here can know): the slot held
-- longest is expected back once it has been held as long as slots were on average, so the wait is until then, at
-- least 0 and at most until that slot expires (then it is free for certain); UNKNOWN_HOLD_WAIT when no slot was
-- ever released (no average yet), within the same bound.
function cc.wait(l)
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[l.i], '(' .. fmt(l.boundary), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if oldest[2] == nil then return 0 end
  local start = tonumber(oldest[2])
  local certain = start + l.period - now
  local average = tonumber(redis.call('HGET', KEYS[l.stats], 'h'))
  local w = UNKNOWN_HOLD_WAIT
  if usable(average) then w = start + average - now end
  if w < 0 then w = 0 end
  if w > certain then w = certain end
  return math.ceil(w)
end

function cc.finish(l, allowed)
  local count = l.count
  local newest
  if allowed == 1 and cc_needed() == 1 then
    local key = KEYS[l.i]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(l.boundary))
    redis.call('ZADD', key, fmt(now), slot)
    count = count + 1
    newest = now
    expire(l.i, math.ceil(l.period / 1000))
  elseif count > 0 then
    newest = tonumber(redis.call('ZRANGE', KEYS[l.i], -1, -1, 'WITHSCORES')[2])
  end
  local reset_ms = 0
  if newest ~= nil then reset_ms = math.ceil((newest + l.period - now) / 1000) end
  return l.capacity - count, reset_ms
end

-- Tokens are not slots: a refund leaves a concurrency limit alone.
function cc.refund(l)
  return 0
end

-- Removes the slot and, for a request that used it ('release', not 'abandon'), counts how long it was held into the
-- average. A slot that has expired counts for nothing: it is removed if still stored (not yet trimmed), the average
-- is left alone, and 0 is returned.
function cc.release(l)
  local key = KEYS[l.i]
  local taken = tonumber(redis.call('ZSCORE', key, slot))
  if taken == nil then return 0 end
  redis.call('ZREM', key, slot)
  if taken <= now - l.period then return 0 end
  if operation == 'abandon' then return 1 end
  local held = now - taken
  if held < 0 then held = 0 end
  local average = tonumber(redis.call('HGET', KEYS[l.stats], 'h'))
  if usable(average) then average = average + (held - average) * HOLD_WEIGHT else average = held end
  redis.call('HSET', KEYS[l.stats], 'h', fmt(math.floor(average + 0.5)))
  local ttl = HOLD_TTL_MS
  if l.period / 1000 > ttl then ttl = math.ceil(l.period / 1000) end
  expire(l.stats, ttl)
  return 1
end

-------------------------------------------------------------------------------- check, lease, refund and release
local ALGORITHMS = { tb = tb, swl = swl, swc = swc, fw = fw, cc = cc }

local header = 3                       -- ARGV values before the limits
if operation == 'lease' then
  header = 8
elseif operation == 'acquire' or operation == 'release' or operation == 'abandon' then
  header = 4
  slot = ARGV[4]
elseif operation ~= 'check' and operation ~= 'refund' then
  return redis.error_reply('ERR unknown rate limit operation \'' .. tostring(operation) .. '\'')
end
if n == nil or #ARGV ~= header + 4 * n then
  return redis.error_reply('ERR rate limit ' .. operation .. ' takes ' .. header .. ' + 4n arguments (n = '
    .. tostring(ARGV[3]) .. ' limits), got ' .. #ARGV)
end
local limits = {}
local slots = 0                        -- concurrency limits
for i = 1, n do
  local at = header + 4 * (i - 1) + 1
  local code = ARGV[at]
  local algorithm = ALGORITHMS[code]
  if algorithm == nil or (operation == 'lease' and algorithm ~= tb) then
    return redis.error_reply('ERR unknown rate limit algorithm code \'' .. code .. '\' for limit ' .. i
      .. ' of a ' .. operation)
  end
  if operation == 'check' and algorithm == cc and cost ~= 0 then
    return redis.error_reply('ERR concurrency limit ' .. i .. ' takes a slot: \'acquire\', not \'check\' (cost '
      .. tostring(ARGV[2]) .. ')')
  end
  limits[i] = { i = i, algorithm = algorithm, capacity = tonumber(ARGV[at + 1]),
                refill = tonumber(ARGV[at + 2]), period = tonumber(ARGV[at + 3]) }
  if algorithm == cc then
    slots = slots + 1
    limits[i].stats = n + slots
  end
end
if #KEYS ~= n + slots then
  return redis.error_reply('ERR rate limit ' .. operation .. ' takes n + ' .. slots .. ' keys (n = ' .. n
    .. ' limits, ' .. slots .. ' of them concurrency limits), got ' .. #KEYS)
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

if operation == 'release' or operation == 'abandon' then
  local released = 0
  for i = 1, n do
    local l = limits[i]
    if l.algorithm == cc then
      released = released + cc.release(l)
    elseif cost > 0 then
      released = released + l.algorithm.refund(l)
    end
  end
  return released
end

local allowed = 1
for i = 1, n do
  local l = limits[i]
  l.algorithm.read(l)
end

local want, duration, returned, unused, returned_until = 0, 0, 0, 0, 0
if operation == 'lease' then
  want = tonumber(ARGV[4])
  duration = tonumber(ARGV[5])
  returned = tonumber(ARGV[6])
  unused = tonumber(ARGV[7])
  returned_until = tonumber(ARGV[8])
  if not (usable(want) and usable(duration) and usable(returned) and usable(unused) and usable(returned_until))
      or unused > returned then
    return redis.error_reply('ERR rate limit lease takes whole numbers >= 0 (unused <= returned)')
  end
  -- the instance's previous lease ends. If the reservation still holds it (the lease was taken, at its end less the
  -- duration, after the reservation's first lease: no reservation ended since), its tokens leave the reservation and
  -- count as spent now (the bucket holds no more than before, and refills from here); and if the lease is still
  -- running, its unspent tokens come back. A lease that has ended gives nothing back: its unspent tokens could no
  -- longer be spent from its end on, and the bucket has refilled since (or the reservation's end counted them as
  -- spent then and the bucket refilled from there), so giving them back would make tokens the limit never refilled.
  if returned > 0 then
    local returned_start = returned_until - duration
    for i = 1, n do
      local l = limits[i]
      -- a bucket read beyond empty by a return alone is one whose last limits were others: left as stored
      if l.reserved > 0 and returned_start >= l.reserved_since and not (l.clamped and cost == 0 and want == 0) then
        local floor = tb_reserved_floor(l, now)
        if floor > l.tat then l.tat = floor end
        l.reserved = l.reserved - returned
        if l.reserved <= 0 then l.reserved = 0; l.reserved_until = 0; l.reserved_since = 0 end
        if now < returned_until then
          l.tat = l.tat - unused * l.interval
          if l.tat < now then l.tat = now end
        end
        l.changed = true
        l.available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
      end
    end
  end
end

for i = 1, n do
  local l = limits[i]
  l.satisfied = l.algorithm.admits(l)
  if not l.satisfied then allowed = 0 end
end

-- A new lease: at most half of what every limit holds after this request, so leases shrink to nothing as a bucket
-- nears empty and its last tokens are decided one request at a time.
local granted = 0
if operation == 'lease' and allowed == 1 and want >= 1 and duration >= 1 then
  granted = want
  for i = 1, n do
    local room = math.floor((limits[i].available - cost) / 2 + EPSILON)
    if room < granted then granted = room end
  end
  if granted < 0 then granted = 0 end
end
local lease_until = 0
if operation == 'lease' and allowed == 1 then
  lease_until = now + duration
  for i = 1, n do
    local l = limits[i]
    tb_take(l, cost + granted)
    if granted > 0 then
      if l.reserved == 0 then l.reserved_since = now end
      l.reserved = l.reserved + granted
      if lease_until > l.reserved_until then l.reserved_until = lease_until end
    end
    l.changed = l.changed or cost + granted > 0
  end
end
local consumes = allowed
if operation == 'lease' then consumes = 0 end   -- taken above

local result = { allowed }
for i = 1, n do
  local l = limits[i]
  local satisfied = 1
  local retry_ms = 0
  if not l.satisfied then
    satisfied = 0
    retry_ms = math.ceil(l.algorithm.wait(l) / 1000)
  end
  local remaining, reset_ms = l.algorithm.finish(l, consumes)
  if remaining > l.capacity then remaining = l.capacity end
  if remaining < 0 then remaining = 0 end
  if retry_ms > MAX then retry_ms = MAX end
  if reset_ms > MAX then reset_ms = MAX end
  result[#result + 1] = satisfied
  result[#result + 1] = remaining
  result[#result + 1] = retry_ms
  result[#result + 1] = reset_ms
end
if operation == 'lease' then
  result[#result + 1] = granted
  if granted == 0 then lease_until = 0 end
  result[#result + 1] = lease_until
end
return result
