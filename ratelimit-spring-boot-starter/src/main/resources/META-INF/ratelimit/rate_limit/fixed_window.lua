-- Fixed window ('fw'): at most capacity tokens per window of one period, windows aligned to multiples of the period
-- since the Unix epoch.
-- Debt (usage limits): a settlement that takes the count beyond the capacity marks the state (d = 1), and the excess
-- is carried: m windows after the window counted, max(0, c - m * capacity) is counted (common.lua, carried), so the
-- client is refused until it has waited off what it used beyond its plan, and the key lives until then. Only what
-- fits ten years of windows is taken (l.cut: the rest, reported as not charged).
-- State in KEYS[i]: a hash {w = start of the window (microseconds), c = tokens admitted in it}, and d = 1 while c is
-- beyond the capacity by a settlement (0 once a later write counts within it; never written for a limit counting
-- requests).

local function define_fw()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local fw = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false }

function fw.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'w', 'c', 'd')
  local w = tonumber(state[1])
  local c = tonumber(state[2])
  if not (usable(w) and usable(c)) then w = nil; c = 0 end
  local t = now
  if w ~= nil and w > t then t = w end   -- clock stepped back behind the stored window: still that window
  l.start = t - math.fmod(t, l.period)
  l.finish_at = l.start + l.period
  l.owes = w ~= nil and state[3] == '1'
  if w == l.start then
    l.used = c
  elseif l.owes and w < l.start then   -- windows elapsed since (whole ones, should the period have changed)
    l.used = carried(c, l.capacity, math.max(1, math.floor((l.start - w) / l.period)))
  else
    l.used = 0
  end
end

fw.admits = count_admits

-- The start of the j-th window after the current one (us).
local function fw_starts(l, j)
  return l.start + j * l.period
end

function fw.wait(l)
  return count_wait(l, fw_starts)
end

function fw.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    l.used = l.used + l.cost
    if l.used > l.capacity then   -- a settlement's charge: a debt carried into the windows after
      -- at most what the windows ending within ten years hold (at least this one's capacity)
      local windows = math.max(1, math.floor((now + MAX_TTL_MS * 1000 - l.start) / l.period))
      local most = math.min(MAX, windows * l.capacity)
      if l.used > most then
        l.cut = math.min(l.cost, l.used - most)
        l.used = l.used - l.cut
      end
    end
    if l.used > l.capacity then
      l.owes = true
      redis.call('HSET', KEYS[l.i], 'w', fmt(l.start), 'c', fmt(l.used), 'd', '1')
    elseif l.owes then
      l.owes = false
      redis.call('HSET', KEYS[l.i], 'w', fmt(l.start), 'c', fmt(l.used), 'd', '0')
    else
      redis.call('HSET', KEYS[l.i], 'w', fmt(l.start), 'c', fmt(l.used))
    end
    local until_at = l.finish_at
    if l.owes then until_at = fw_starts(l, windows_until(l.used, 0, l.capacity)) end
    expire(l.i, math.ceil((until_at - now) / 1000))
  end
  local reset_ms = 0
  if l.used > 0 then
    local full_at = l.finish_at
    if l.owes and l.used > l.capacity then full_at = fw_starts(l, windows_until(l.used, 0, l.capacity)) end
    reset_ms = math.ceil((full_at - now) / 1000)
  end
  return l.capacity - l.used, reset_ms
end

-- Takes cost from the window's count.
fw.refund = refund_count

-- The tokens counted in the window of now (after read).
function fw.taken(l)
  return l.used
end

return fw
end
