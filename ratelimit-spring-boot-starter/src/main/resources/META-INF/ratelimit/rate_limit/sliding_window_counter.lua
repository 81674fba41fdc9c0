-- Sliding window counter ('swc'), Cloudflare's approximation: estimate(t) = weighted + current, where start is the
-- start of t's window (aligned to multiples of the period since the Unix epoch), current the tokens admitted in it,
-- previous those admitted in the window before, and weighted = previous * (period - (t - start)) / period rounded to
-- the nearest whole token. Admits when estimate + cost <= capacity, compared as weighted <= capacity - current - cost
-- (exact for integers up to 2^53). The estimate only falls as time passes (it is continuous at window edges).
-- Debt (usage limits): a settlement that takes the current count beyond the capacity marks the state (d = 1), and the
-- excess is carried as in a fixed window: m windows after the window that counted c, the current count is
-- max(0, c - m * capacity) and the previous one min(capacity, max(0, c - (m - 1) * capacity)), i.e. at a window's
-- end its count is split into the capacity, which weighs as the previous window's, and the excess, which the next
-- window starts with (the rule applied window after window). The estimate stays continuous at the edges (c at the
-- end of the window, capacity + (c - capacity) at the start of the next) and only falls as time passes, so
-- Retry-After stays exact; the client is refused until the excess has been counted in full windows and its last
-- capacity no longer weighs more than leaves room, and the key lives until the last count no longer weighs. Only what
-- fits ten years of windows is taken (l.cut).
-- State in KEYS[i]: a hash {w = start of the current window (microseconds), c = tokens admitted in it, p = tokens
-- admitted in the window before it}, and d = 1 while c is beyond the capacity by a settlement (0 once a later write
-- counts within it; never written for a limit counting requests).

local function define_swc()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local swc = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false }

function swc.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'w', 'c', 'p', 'd')
  local w = tonumber(state[1])
  local c = tonumber(state[2])
  local p = tonumber(state[3])
  if usable(w) and usable(c) and usable(p) then
    l.w = w; l.c = c; l.p = p
    l.owes = state[4] == '1'
  else
    l.w = nil; l.c = 0; l.p = 0
    l.owes = false
  end
end

-- The counts as seen at time t: t (moved up to the stored window's start if the clock stepped back behind it), the
-- start of t's window, the previous window's count and the current one's (a debt carried, see above).
local function swc_view(l, t)
  if l.w ~= nil and l.w > t then t = l.w end
  local start = t - math.fmod(t, l.period)
  local previous, current = 0, 0
  if l.w == start then
    previous = l.p; current = l.c
  elseif l.owes and l.w < start then   -- windows elapsed since (whole ones, should the period have changed)
    local elapsed = math.max(1, math.floor((start - l.w) / l.period))
    current = carried(l.c, l.capacity, elapsed)
    previous = math.min(l.capacity, carried(l.c, l.capacity, elapsed - 1))
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
    -- in the j-th window after this one, the first whose carried count leaves room (j = 1 but for a debt): it weighs
    -- this window's count up to the capacity as the previous one's and counts the rest carried
    local next_room = l.capacity - l.cost
    local j = 1
    if l.owes then j = windows_until(current, next_room, l.capacity) end
    local weighs = math.min(current - (j - 1) * l.capacity, l.capacity)
    if not l.owes then weighs = current end
    local counted = carried(current, l.capacity, j)
    if not l.owes then counted = 0 end
    target = start + j * l.period + math.floor(l.period * (weighs - (next_room - counted) - 0.5) / weighs) + 1
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

-- When the whole capacity is back, from the counts of the window starting at start: once the latest non-zero count
-- no longer weighs (a current count carried over windows: its last part, no more than the capacity, weighing in the
-- window after the last one it is carried into).
local function swc_full_at(l, start, previous, current)
  if current > 0 then
    local j = 1
    if l.owes then j = windows_until(current, 0, l.capacity) end
    return swc_weightless_at(l, current - (j - 1) * l.capacity, start + j * l.period)
  elseif previous > 0 then
    return swc_weightless_at(l, previous, start)
  end
  return now
end

function swc.finish(l, allowed)
  local at, start, previous, current = swc_view(l, now)
  -- the whole capacity is back once the latest non-zero count no longer weighs
  local full_at = swc_full_at(l, start, previous, current)
  if allowed == 1 and l.cost > 0 then
    current = current + l.cost
    if current > l.capacity then   -- a settlement's charge: a debt carried into the windows after
      -- at most what the windows ending within ten years hold, the last one weighing in the window after
      local windows = math.max(1, math.floor((now + MAX_TTL_MS * 1000 - start) / l.period) - 1)
      local most = math.min(MAX, windows * l.capacity)
      if current > most then
        l.cut = math.min(l.cost, current - most)
        current = current - l.cut
      end
    end
    if current > l.capacity then
      l.owes = true
      redis.call('HSET', KEYS[l.i], 'w', fmt(start), 'c', fmt(current), 'p', fmt(previous), 'd', '1')
    elseif l.owes then
      l.owes = false
      redis.call('HSET', KEYS[l.i], 'w', fmt(start), 'c', fmt(current), 'p', fmt(previous), 'd', '0')
    else
      redis.call('HSET', KEYS[l.i], 'w', fmt(start), 'c', fmt(current), 'p', fmt(previous))
    end
    full_at = swc_full_at(l, start, previous, current)
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
  local _, start, _, current = swc_view(l, now)
  if l.owes and l.w ~= nil and l.w < start then return current end   -- a debt carried: what is still counted of it
  if l.w == start or l.w == start - l.period then return l.c end
  return 0
end

return swc
end
