-- Rate limit script: what every algorithm shares (the request's arguments, constants, helpers). The script is this
-- folder's files joined in the order of LuaScript.RATE_LIMIT_SOURCES; its contract (KEYS, ARGV, replies) heads
-- dispatch.lua.

local MAX = 9007199254740992          -- 2^53: largest integer a double holds exactly; caps every output
local MAX_TTL_MS = 315360000000       -- 10 years: PEXPIRE ceiling (a bucket that takes longer to refill expires full)
local EPSILON = 1e-9                  -- tolerance in tokens against floating-point rounding of fractional tokens

-- The call's keys and arguments: Redis' KEYS and ARGV, or one call's share of them in a 'batch' (dispatch.lua)
local KEYS, ARGV = KEYS, ARGV

local now                             -- Redis time in microseconds, read once a check starts (a refund needs none)

local operation = ARGV[1]
local n = tonumber(ARGV[2])
local slot                            -- 'acquire', 'release' and 'abandon': the slot's id

-- A number as the script stores it: '%.17g', exact for any double. A whole number in 1 .. 2^53 - 1 (a tat, a TTL)
-- prints the same digits with '%d', which costs less than half as much.
local function fmt(x)
  if type(x) == 'number' and x >= 1 and x < MAX and x % 1 == 0 then return string.format('%d', x) end
  return string.format('%.17g', x)
end

-- The reply of a redis.pcall that read a key of another type (WRONGTYPE) is a foreign key; any other error (an ACL
-- user without the command or the key: "can't run this command", "can't access ... keys") is raised, so that a
-- missing permission fails the check instead of reading as a full bucket.
local function wrong_type(reply)
  if string.find(reply.err, 'WRONGTYPE', 1, true) == nil then error(reply) end
  return true
end

local function usable(x)   -- a finite number >= 0
  return x ~= nil and x == x and x ~= math.huge and x >= 0
end

local function ttl_ms(ttl)   -- a TTL (ms) within what PEXPIRE takes: 1 .. MAX_TTL_MS
  if ttl < 1 then return 1 end
  if ttl > MAX_TTL_MS then return MAX_TTL_MS end
  return ttl
end

local function expire(i, ttl)   -- KEYS[i]'s TTL (ms)
  redis.call('PEXPIRE', KEYS[i], fmt(ttl_ms(ttl)))
end

local function put(i, value, ttl)   -- a string value and its TTL (ms), in one call
  redis.call('SET', KEYS[i], value, 'PX', fmt(ttl_ms(ttl)))
end

-- The smallest whole wait w, from an estimate, for which fits(l, now + w) holds: the estimate corrected by up to three
-- microseconds each way against float rounding (fits must never turn false as time passes).
local function settle(l, w, fits)
  local steps = 0
  while w > 0 and steps < 3 and fits(l, now + w - 1) do w = w - 1; steps = steps + 1 end
  steps = 0
  while steps < 3 and not fits(l, now + w) do w = w + 1; steps = steps + 1 end
  return w
end

-- Whether a period's count (l.used) admits l.cost more, compared as cost <= capacity - used (used + cost could round
-- above 2^53): the fixed window's and the quota's admission.
local function count_admits(l)
  return l.cost <= l.capacity - l.used
end

-- A usage limit's debt in the window algorithms and quotas: a settlement may count a window's (period's) tokens
-- beyond its capacity, and marks the state so (l.owes); the excess is then carried, max(0, count - capacity) per
-- window (period) elapsed, so the j-th window after one that counted `count` starts with max(0, count - j *
-- capacity) counted. A check never counts beyond the capacity, so a limit counting requests never carries anything.
local function carried(count, capacity, elapsed)
  local rest = count - elapsed * capacity
  if rest < 0 then return 0 end
  return rest
end

-- The number of windows (periods) after the current one until a count of `count` carried leaves at most `most`:
-- the smallest j >= 1 with count - j * capacity <= most (count > most).
local function windows_until(count, most, capacity)
  local over = count - most
  if over > capacity then return math.ceil(over / capacity) end
  return 1
end

-- The wait until a period's count admits l.cost: nothing changes before the period ends (l.finish_at, us), then the
-- count is 0, or, for a usage limit in debt (l.owes), what is carried into the periods after: the first whose
-- carried count admits cost, starts(l, j) giving the start of the j-th period after the current one. Exact when
-- starts is.
local function count_wait(l, starts)
  if l.cost > l.capacity then return MAX end
  if l.owes and starts then
    return starts(l, windows_until(l.used, l.capacity - l.cost, l.capacity)) - now
  end
  return l.finish_at - now
end

-- Takes l.cost from a window's stored count 'c', floored at 0 (the window algorithms' refund).
local function refund_count(l)
  local c = tonumber(redis.call('HGET', KEYS[l.i], 'c'))
  if c == nil or c ~= c then return 0 end
  c = c - l.cost
  if c < 0 then c = 0 end
  redis.call('HSET', KEYS[l.i], 'c', fmt(c))
  return 1
end

-- Each algorithm is a table of functions over a limit l = {i = its index in KEYS, capacity, refill, period, cost =
-- the tokens this call takes from it or gives back to it}: read(l) loads its state; admits(l) tells whether it admits
-- l.cost tokens now; wait(l) gives the microseconds until it does (called only when it does not); finish(l, allowed)
-- consumes l.cost when allowed (writing the state and its TTL; a settlement's charge may take it beyond empty) and
-- returns the whole tokens remaining and the ms until the whole capacity is available (a token bucket sets l.cut to
-- the tokens of a settlement's charge it could not take); refund(l) gives l.cost tokens back to the stored state and
-- returns 1, or 0 when there is no state to change; taken(l) (after read) tells the tokens a refund can give back
-- ('settle').
