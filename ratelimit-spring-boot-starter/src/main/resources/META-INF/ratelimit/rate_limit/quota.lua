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
-- Debt (a quota counting usage): a settlement that takes the period's use (c - t) beyond the capacity marks the state
-- with d = the end of the period after it (us; 0 once a later write counts within the capacity; never written for a
-- quota counting requests), and the excess is carried: the m-th period after starts with max(0, use - m * capacity)
-- counted (common.lua, carried), its top-ups its own. Periods elapsed: 1 when now's period starts before d, 2 when
-- it starts at d, else 2 + the time from d to its start in periods of the median length of the three around now
-- (exact for a fixed period, days, weeks and years; months to the nearest one). The key lives until the debt is
-- repaid (periods beyond the next estimated at 9/8 of the median length), and a client in debt is told to retry at
-- the start of the first period whose carried count admits it (exact for the next two periods, estimated from the
-- median length beyond). Only what fits ten years of periods is taken (l.cut).

local function define_q()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local q = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false,
            top_up = false }

-- The period of the boundaries that holds now: its start and end (us), the end of the period after it (estimated
-- from the median length when now is in the last period of the boundaries) and the median length of the three
-- periods (us); or nil when now is outside them. The first two may be negative: a fixed period longer than the time
-- since the epoch (up to 36,500 days) started at 0.
local function q_period(spec)
  local b1, b2, b3, b4 = string.match(spec or '', '^(%-?%d+),(%-?%d+),(%d+),(%d+)$')
  local b = { tonumber(b1), tonumber(b2), tonumber(b3), tonumber(b4) }
  if b[4] == nil or not (b[1] < b[2] and b[2] < b[3] and b[3] < b[4]) then return nil end
  for j = 1, 3 do
    if b[j] <= now and now < b[j + 1] then
      local x, y, z = b[2] - b[1], b[3] - b[2], b[4] - b[3]
      local median = math.max(math.min(x, y), math.min(math.max(x, y), z))
      return b[j], b[j + 1], b[j + 2] or (b[4] + median), median
    end
  end
  return nil
end

-- The start of the j-th period after the current one (us): its end, the next one's end, then median lengths.
local function q_starts(l, j)
  if j <= 1 then return l.finish_at end
  return l.next_end + (j - 2) * l.median
end

-- The periods from the one a debt marked d = `d` (the end of the period after it) to now's period (starting at
-- l.start): see above.
local function q_elapsed(l, d)
  if l.start < d then return 1 end
  return 2 + math.floor((l.start - d) / l.median + 0.5)
end

function q.read(l)
  l.start, l.finish_at, l.next_end, l.median = q_period(l.spec)
  if l.start == nil then
    error({ err = 'ERR quota limit ' .. l.i .. ': Redis time ' .. fmt(now) .. ' is outside its period boundaries \''
      .. tostring(l.spec) .. '\'' })
  end
  local state = redis.call('HMGET', KEYS[l.i], 'p', 'c', 't', 'd')
  local p = tonumber(state[1])
  local c = tonumber(state[2])
  local t = tonumber(state[3])
  local d = tonumber(state[4])
  l.used, l.topped, l.stale, l.owes = 0, 0, false, false
  if usable(p) and usable(c) and p == l.start then
    if usable(t) then l.topped = t end
    l.used = c - l.topped
    l.owes = usable(d) and d > 0
  else
    if state[3] then
      l.stale = true                     -- a top-up of another period (or of corrupt state): zeroed by the next write
    end
    if usable(p) and usable(c) and usable(d) and d > 0 and p < l.start then   -- a debt carried from period p
      local excess = c - l.capacity
      if usable(t) then excess = excess - t end
      if excess > 0 then
        l.used = carried(excess, l.capacity, q_elapsed(l, d) - 1)
        l.owes = true
      end
    end
  end
end

q.admits = count_admits

function q.wait(l)
  return count_wait(l, q_starts)
end

-- Writes the current period's state (after read, l.used changed): p, c = use + top-ups, t when it changes (a top-up,
-- or another period's zeroed), d while the use is beyond the capacity; the TTL to the period's end, or to when a debt
-- is repaid.
local function q_write(l, topped)
  local use = l.used
  local fields = { 'p', fmt(l.start), 'c', fmt(use + topped) }
  if l.stale or topped ~= l.topped then
    fields[#fields + 1] = 't'; fields[#fields + 1] = fmt(topped)
  end
  if use > l.capacity then
    l.owes = true
    fields[#fields + 1] = 'd'; fields[#fields + 1] = fmt(l.next_end)
  elseif l.owes then
    l.owes = false
    fields[#fields + 1] = 'd'; fields[#fields + 1] = '0'
  end
  redis.call('HSET', KEYS[l.i], unpack(fields))
  local until_at = l.finish_at
  if l.owes then
    local j = windows_until(use, 0, l.capacity)
    until_at = q_starts(l, j)
    if j > 2 then until_at = until_at + (j - 2) * l.median / 8 end   -- months of 31 days against a median of 28
  end
  expire(l.i, math.ceil((until_at - now) / 1000))
end

function q.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    l.used = l.used + l.cost
    if l.used > l.capacity then   -- a settlement's charge: a debt carried into the periods after
      -- at most what the periods ending within ten years hold (at least this one's limit)
      local periods = math.max(1, math.floor((MAX_TTL_MS * 1000) / (l.median * 9 / 8)))
      local most = math.min(MAX, periods * l.capacity)
      if l.used > most then
        l.cut = math.min(l.cost, l.used - most)
        l.used = l.used - l.cut
      end
    end
    q_write(l, l.topped)   -- a stale top-up (another period's) written as 0 (no HDEL: not in the minimal ACL rule)
  end
  -- a quota resets at its period's end, whether or not anything was counted in the period yet, or once a debt is
  -- repaid
  local reset_at = l.finish_at
  if l.owes and l.used > l.capacity then reset_at = q_starts(l, windows_until(l.used, 0, l.capacity)) end
  return l.capacity - l.used, math.ceil((reset_at - now) / 1000)
end

-- Takes cost from the stored count.
q.refund = refund_count

-- The stored count a refund takes from (after read): the current period's, top-ups aside.
function q.taken(l)
  return l.used + l.topped
end

-- Tops the current period up by l.cost tokens (after read): t grows by them, at most to 2^53 less the capacity (so
-- capacity + t stays exact), the state made for this period when absent or of another (a debt carried into it
-- counted in c), its TTL set to the period's end (or to when a debt it leaves is repaid). Returns the tokens added:
-- l.cost, or fewer (0 included) where the cap holds.
function q.top_up(l)
  local t = l.topped + l.cost
  if t > MAX - l.capacity then t = math.max(l.topped, MAX - l.capacity) end   -- never lowered (a limit raised since)
  l.used = l.used + l.topped - t
  q_write(l, t)
  return t - l.topped
end

return q
end
