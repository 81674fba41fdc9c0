-- Fixed window ('fw'): at most capacity tokens per window of one period, windows aligned to multiples of the period
-- since the Unix epoch.
-- State in KEYS[i]: a hash {w = start of the window (microseconds), c = tokens admitted in it}.

local function define_fw()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local fw = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false }

function fw.read(l)
  local state = redis.call('HMGET', KEYS[l.i], 'w', 'c')
  local w = tonumber(state[1])
  local c = tonumber(state[2])
  if not (usable(w) and usable(c)) then w = nil; c = 0 end
  local t = now
  if w ~= nil and w > t then t = w end   -- clock stepped back behind the stored window: still that window
  l.start = t - math.fmod(t, l.period)
  l.finish_at = l.start + l.period
  if w == l.start then l.used = c else l.used = 0 end
end

fw.admits = count_admits

fw.wait = count_wait

function fw.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    l.used = l.used + l.cost
    redis.call('HSET', KEYS[l.i], 'w', fmt(l.start), 'c', fmt(l.used))
    expire(l.i, math.ceil((l.finish_at - now) / 1000))
  end
  local reset_ms = 0
  if l.used > 0 then reset_ms = math.ceil((l.finish_at - now) / 1000) end
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
