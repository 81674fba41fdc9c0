-- Calendar quota ('q'): at most capacity tokens per period, periods of the gateway's calendar (a day, week, month or
-- year in a time zone, with daylight-saving days of 23 or 25 hours, or a fixed duration), decided on Redis' clock.
-- The gateway computes the period boundaries around its own time (QuotaPeriod.boundariesAround) and sends them as the
-- limit's refill period: four times in microseconds, comma-separated, strictly increasing (the previous period's
-- start, the current one's start, its end, the next one's end); the script counts in the period [b(i), b(i+1))
-- that holds Redis' now, so a gateway clock off by less than a period still counts in the right one. Redis time
-- outside [b1, b4) is an error before any write (the gateway's clock is off by more than a period).
-- State in KEYS[i]: a hash {p = start of the period counted (microseconds), c = tokens admitted in it}, expiring when
-- the period ends.

local function define_q()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local q = { read = false, admits = false, wait = false, finish = false, refund = false }

-- The period of the boundaries that holds now: its start and end (us), or nil when now is outside them.
local function q_period(spec)
  local b1, b2, b3, b4 = string.match(spec or '', '^(%d+),(%d+),(%d+),(%d+)$')
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
  local state = redis.call('HMGET', KEYS[l.i], 'p', 'c')
  local p = tonumber(state[1])
  local c = tonumber(state[2])
  if usable(p) and usable(c) and p == l.start then l.used = c else l.used = 0 end
end

q.admits = count_admits

q.wait = count_wait

function q.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    l.used = l.used + l.cost
    redis.call('HSET', KEYS[l.i], 'p', fmt(l.start), 'c', fmt(l.used))
    expire(l.i, math.ceil((l.finish_at - now) / 1000))
  end
  -- a quota resets at its period's end, whether or not anything was counted in the period yet
  return l.capacity - l.used, math.ceil((l.finish_at - now) / 1000)
end

-- Takes cost from the stored count.
q.refund = refund_count

return q
end
