-- Sliding window counter ('swc'), Cloudflare's approximation: estimate(t) = weighted + current, where start is the
-- start of t's window (aligned to multiples of the period since the Unix epoch), current the tokens admitted in it,
-- previous those admitted in the window before, and weighted = previous * (period - (t - start)) / period rounded to
-- the nearest whole token. Admits when estimate + cost <= capacity, compared as weighted <= capacity - current - cost
-- (exact for integers up to 2^53). The estimate only falls as time passes (it is continuous at window edges).
-- State in KEYS[i]: a hash {w = start of the current window (microseconds), c = tokens admitted in it, p = tokens
-- admitted in the window before it}.

local function define_swc()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local swc = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false }

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
  return swc_weighted(l, previous, at, start) <= l.capacity - current - l.cost
end

function swc.admits(l)
  return swc_fits(l, now)
end

-- Closed form for the first time the estimate leaves room for cost (in this window while the previous window's
-- weight can make the room: previous * (period - e) / period < room + 1/2; else in the next one, where the current
-- count becomes the previous, with room capacity - cost), then the same correction as the token bucket's: the
-- smallest whole w for which swc_fits(now + w) holds.
function swc.wait(l)
  if l.cost > l.capacity then return MAX end
  local _, start, previous, current = swc_view(l, now)
  local room = l.capacity - l.cost - current
  local target
  if room >= 0 and previous > 0 then
    target = start + math.floor(l.period * (previous - room - 0.5) / previous) + 1
  elseif room >= 0 then
    target = now
  else
    local next_room = l.capacity - l.cost
    target = start + l.period + math.floor(l.period * (current - next_room - 0.5) / current) + 1
  end
  local w = target - now
  if w < 0 then w = 0 end
  return settle(l, w, swc_fits)
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
  if allowed == 1 and l.cost > 0 then
    current = current + l.cost
    full_at = swc_weightless_at(l, current, start + l.period)
    redis.call('HSET', KEYS[l.i], 'w', fmt(start), 'c', fmt(current), 'p', fmt(previous))
    expire(l.i, math.ceil((full_at - now) / 1000))
  end
  local reset_us = full_at - now
  if reset_us < 0 then reset_us = 0 end
  return l.capacity - current - swc_weighted(l, previous, at, start), math.ceil(reset_us / 1000)
end

-- Takes cost from the latest window's count (where the check was counted, unless a window ended in between).
swc.refund = refund_count

-- The stored count a refund takes from (after read), while it still weighs (its window is now's or the one before).
function swc.taken(l)
  local _, start = swc_view(l, now)
  if l.w == start or l.w == start - l.period then return l.c end
  return 0
end

return swc
end
