-- Concurrency ('cc'): at most capacity requests in flight. A slot taken at time s counts while now < s + period (the
-- longest a request may hold it: a slot of an instance that died frees itself); 'release' and 'abandon' remove it at
-- once. Slot ids are chosen by the caller, unique per request. A request needs one slot whatever it costs in the rate
-- limits: a concurrency limit's cost is 1 (take a slot) or 0 (read). The hold statistics keep a moving average of how long slots were held before 'release' (each new
-- hold weighs HOLD_WEIGHT, as in TCP's smoothed round-trip time, RFC 6298), for the retry estimate.
-- State in KEYS[i]: a sorted set, one member per slot taken (its id), scored with the time it was taken
-- (microseconds); in KEYS[l.stats] (KEYS[n + j] for the j-th concurrency limit): a hash {h = the average time a slot
-- was held, microseconds}.

local HOLD_WEIGHT = 0.125             -- weight of the newest hold time in the moving average
local HOLD_TTL_MS = 3600000           -- hold statistics are kept an hour after the last release (or a refill period)
local UNKNOWN_HOLD_WAIT = 1000000     -- retry estimate (us) of a concurrency limit with no hold time measured yet

local function define_cc()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local cc = { read = false, admits = false, wait = false, finish = false, refund = false, release = false }

local function cc_needed(l)
  if l.cost > 0 then return 1 end
  return 0
end

function cc.read(l)
  l.boundary = now - l.period   -- slots taken at or before it have expired
  l.count = redis.call('ZCOUNT', KEYS[l.i], '(' .. fmt(l.boundary), '+inf')
end

function cc.admits(l)
  return l.count + cc_needed(l) <= l.capacity
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
  if allowed == 1 and cc_needed(l) == 1 then
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

return cc
end
