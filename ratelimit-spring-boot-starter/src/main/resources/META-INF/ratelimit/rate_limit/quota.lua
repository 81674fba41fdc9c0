-- Calendar quota ('q'): at most capacity tokens per period, periods of the gateway's calendar (a day, week, month or
-- year in a time zone, with daylight-saving days of 23 or 25 hours, or a fixed duration), decided on Redis' clock.
-- The gateway computes the period boundaries around its own time (QuotaPeriod.boundariesAround) and sends them as the
-- limit's refill period: four times in microseconds, comma-separated, strictly increasing (the previous period's
-- start, the current one's start, its end, the next one's end); the script counts in the period [b(i), b(i+1))
-- that holds Redis' now, so a gateway clock off by less than a period still counts in the right one. Redis time
-- outside [b1, b4) is an error before any write (the gateway's clock is off by more than a period).
-- State in KEYS[i]: a hash {p = start of the period counted (microseconds), c = tokens admitted in it, and, once an
-- operator has topped the quota up in that period ('topup', dispatch.lua), t = the tokens topped up}, expiring when the
-- period ends. The period's use is c - t: below zero after a top-up beyond what was used, so the client may be
-- admitted more than capacity in that period. A refund takes from c (floored at 0), never from a top-up.

local function define_q()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local q = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false,
            top_up = false }

-- The period of the boundaries that holds now: its start and end (us), or nil when now is outside them. The first
-- two may be negative: a fixed period longer than the time since the epoch (up to 36,500 days) started at 0.
local function q_period(spec)
  local b1, b2, b3, b4 = string.match(spec or '', '^(%-?%d+),(%-?%d+),(%d+),(%d+)$')
  local b = { tonumber(b1), tonumber(b2), tonumber(b3), tonumber(b4) }
  if b[4] == nil or not (b[1] < b[2] and b[2] < b[3] and b[3] < b[4]) then return nil end
  for j = 1, 3 do
    if b[j] <= now and now < b[j + 1] then return b[j], b[j + 1] end
  end
  return nil
end

function q.read(l)
  l.start, l.finish_at = q_period(l.spec)
  if l.start == nil then
    error({ err = 'ERR quota limit ' .. l.i .. ': Redis time ' .. fmt(now) .. ' is outside its period boundaries \''
      .. tostring(l.spec) .. '\'' })
  end
  local state = redis.call('HMGET', KEYS[l.i], 'p', 'c', 't')
  local p = tonumber(state[1])
  local c = tonumber(state[2])
  local t = tonumber(state[3])
  l.used, l.topped, l.stale = 0, 0, false
  if usable(p) and usable(c) and p == l.start then
    if usable(t) then l.topped = t end
    l.used = c - l.topped
  elseif state[3] then
    l.stale = true                       -- a top-up of another period (or of corrupt state): zeroed by the next write
  end
end

q.admits = count_admits

q.wait = count_wait

function q.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    l.used = l.used + l.cost
    if l.stale then                      -- the other period's top-up ends (no HDEL: not in the minimal ACL rule)
      redis.call('HSET', KEYS[l.i], 'p', fmt(l.start), 'c', fmt(l.used), 't', '0')
    else
      redis.call('HSET', KEYS[l.i], 'p', fmt(l.start), 'c', fmt(l.used + l.topped))
    end
    expire(l.i, math.ceil((l.finish_at - now) / 1000))
  end
  -- a quota resets at its period's end, whether or not anything was counted in the period yet
  return l.capacity - l.used, math.ceil((l.finish_at - now) / 1000)
end

-- Takes cost from the stored count.
q.refund = refund_count

-- The stored count a refund takes from (after read): the current period's, top-ups aside.
function q.taken(l)
  return l.used + l.topped
end

-- Tops the current period up by l.cost tokens (after read): t grows by them, at most to 2^53 less the capacity (so
-- capacity + t stays exact), the state made for this period when absent or of another, its TTL set to the period's
-- end. Returns the tokens added: l.cost, or fewer (0 included) where the cap holds.
function q.top_up(l)
  local t = l.topped + l.cost
  if t > MAX - l.capacity then t = math.max(l.topped, MAX - l.capacity) end   -- never lowered (a limit raised since)
  redis.call('HSET', KEYS[l.i], 'p', fmt(l.start), 'c', fmt(l.used + l.topped), 't', fmt(t))
  expire(l.i, math.ceil((l.finish_at - now) / 1000))
  return t - l.topped
end

return q
end
