-- Sliding window log ('swl'): at most capacity tokens admitted in any window of one period, exactly. An entry
-- admitted at time s counts while now < s + period. Members are named after their score ('<s>', then '<s>:2' ..
-- '<s>:<cost>'), and each admission is scored strictly after the newest entry (normally now; 1 us later if another
-- request got the same microsecond, later still if the clock stepped back), so members are unique.
-- State in KEYS[i]: a sorted set, one member per admitted token, scored with its admission time (microseconds).

local LOG_BATCH = 500                 -- sorted-set members per ZADD call (Lua's unpack has a stack limit)

local function define_swl()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local swl = { read = false, admits = false, wait = false, finish = false, refund = false }

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
  return l.cost <= l.capacity - l.count
end

-- The k oldest entries of the window must leave it (k = count + cost - capacity): that happens when the k-th oldest,
-- scored s, does, at now' = s + period. Integers below 2^53: exact.
function swl.wait(l)
  local k = l.count + l.cost - l.capacity
  if k > l.count then return MAX end   -- cost exceeds capacity: it never fits
  local rank = l.expired + k - 1
  local s = tonumber(redis.call('ZRANGE', KEYS[l.i], rank, rank, 'WITHSCORES')[2])
  return s + l.period - now
end

function swl.finish(l, allowed)
  local used = l.count
  local newest = l.newest
  if allowed == 1 and l.cost > 0 then
    local key = KEYS[l.i]
    if l.expired > 0 then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(l.boundary))
    end
    local t = now
    if newest ~= nil and newest >= t then t = newest + 1 end
    local score = fmt(t)
    local batch = {}
    for j = 1, l.cost do
      batch[#batch + 1] = score
      batch[#batch + 1] = (j == 1) and score or (score .. ':' .. j)
      if #batch >= 2 * LOG_BATCH then
        redis.call('ZADD', key, unpack(batch))
        batch = {}
      end
    end
    if #batch > 0 then redis.call('ZADD', key, unpack(batch)) end
    used = used + l.cost
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
  if l.cost > 0 and redis.call('ZCARD', KEYS[l.i]) > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[l.i], -l.cost, -1)
    return 1
  end
  return 0
end

return swl
end
