-- Token bucket ('tb'), in the GCRA form (the generic cell rate algorithm, ITU-T I.371, "virtual scheduling"): the
-- state is tat, the time (microseconds) at which the bucket is full again. A token takes interval = period / refill
-- to refill and tat may run at most tau = capacity * interval ahead of now, so at time t the bucket holds
-- capacity - max(0, tat - t) / interval tokens. Taking c tokens sets tat = max(tat, t) + c * interval, stored rounded
-- up to whole microseconds. A tat beyond now + tau (limits changed, clock stepped back) is an empty bucket.
-- Leases: while leases are out the bucket cannot refill past the tokens they reserve: until `until` it holds at most
-- capacity - reserved; at `until` the reserved tokens count as spent and refill from there.
-- Owing: a settlement that charges more than the bucket holds takes it beyond empty (tat beyond now + tau) by all it
-- charges, and the bucket refills from below zero: the debt is carried until it is repaid, the key's TTL covering
-- it. Only arithmetic caps it: tat at most now + max(tau, TB_MAX_AHEAD) (ten years, the longest TTL), the part of a
-- charge beyond that not taken (reported as not charged: l.cut).
-- State in KEYS[i], a string: 'tat', or 'tat:reserved:until:since' while leases are out ('since': when the
-- reservation's first lease was taken), or 'tat:owes' when a settlement took it beyond empty (never with leases).

local TB_MAX_AHEAD = MAX_TTL_MS * 1000   -- most a debt may run ahead of now (us): the key lives until it is repaid

local function define_tb()   -- called on a run's first use of the algorithm (dispatch.lua)
-- made with its fields (the functions below), so that the table is sized once, not grown field by field
local tb = { read = false, admits = false, wait = false, finish = false, refund = false, taken = false,
             give_back = false, lease = false }

local function tb_reserved_floor(l, t)   -- the lowest tat the reservation allows at time t (t >= now)
  local f = t
  if f > l.reserved_until then f = l.reserved_until end
  return f + l.reserved * l.interval
end

-- tat as seen at time t >= now: the stored one, raised to the reservation's floor, at least t (a full bucket)
local function tb_tat_at(l, t)
  local tat = l.tat
  if l.reserved > 0 then
    local floor = tb_reserved_floor(l, t)
    if floor > tat then tat = floor end
  end
  if tat < t then tat = t end
  return tat
end

-- The most tat may run ahead of now while the bucket owes: now + tau, or TB_MAX_AHEAD if that is more.
local function tb_most_ahead(l)
  if l.tau > TB_MAX_AHEAD then return now + l.tau end
  return now + TB_MAX_AHEAD
end

local function tb_fits(l, t)
  return l.capacity - (tb_tat_at(l, t) - t) / l.interval + EPSILON >= l.cost
end

-- Parses the stored value: 'tat', 'tat:reserved:until:since' or 'tat:owes'; anything else (unusable, or a key of
-- another type) is a full bucket.
function tb.read(l)
  l.interval = l.period / l.refill
  l.tau = l.capacity * l.interval
  l.tat = now
  l.reserved = 0
  l.reserved_until = 0
  l.reserved_since = 0      -- when the first lease of the reservation was taken
  local owes = false        -- a settlement took the bucket beyond empty
  local value = redis.pcall('GET', KEYS[l.i])
  if type(value) == 'string' then
    local tat, reserved, reserved_until, reserved_since = value, nil, nil, nil
    if string.find(value, ':', 1, true) ~= nil then   -- not a lone tat: leases are out (or the value is corrupt)
      tat, reserved, reserved_until, reserved_since = string.match(value, '^([^:]+):([^:]+):([^:]+):([^:]+)$')
      if tat == nil then
        tat = string.match(value, '^([^:]+):owes$')
        owes = tat ~= nil
        if not owes then tat = value end
      end
      reserved = tonumber(reserved)
      reserved_until = tonumber(reserved_until)
      reserved_since = tonumber(reserved_since)
    end
    tat = tonumber(tat)
    if usable(tat) then l.tat = tat end
    if usable(reserved) and usable(reserved_until) and usable(reserved_since) and reserved > 0 then
      if now < reserved_until then
        l.reserved = reserved
        l.reserved_until = reserved_until
        l.reserved_since = reserved_since
      else
        -- every lease has ended: its tokens count as spent at its end
        local spent_until = reserved_until + reserved * l.interval
        if spent_until > l.tat then l.tat = spent_until end
      end
    end
  elseif type(value) == 'table' and value.err ~= nil then
    wrong_type(value)   -- another type: a full bucket, overwritten on the next write
  end
  local beyond = now + l.tau      -- an empty bucket's tat
  if owes then beyond = tb_most_ahead(l) end
  if l.tat > beyond then
    -- beyond an empty bucket, or beyond the most a debt runs ahead (the rate or capacity changed, or the clock stepped
    -- back):
    -- the limit, stored so by a call that takes tokens even if the request is denied, so the bucket refills at its new
    -- rate from now; a call that takes nothing (a read, a lease given back) runs under limits other than the bucket's
    -- last ones (a stale instance): storing the clamp would make room those limits never refilled, so it leaves the
    -- bucket as stored
    l.tat = beyond
    l.clamped = true
    if l.cost > 0 then l.changed = true end
  end
  l.available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
end

function tb.admits(l)
  return l.available + EPSILON >= l.cost
end

-- The time the bucket is full again (us), with the reservation counted as spent at its end.
local function tb_full_at(l)
  local full_at = l.tat
  if l.reserved > 0 then
    local after = l.reserved_until + l.reserved * l.interval
    if after > full_at then full_at = after end
  end
  if full_at < now then full_at = now end
  return full_at
end

-- The smallest whole w for which the admission rule, evaluated w microseconds later, admits the request (so waiting
-- exactly the returned time succeeds). tat_at(t) - t never grows with t, so the rule, once true, stays true.
function tb.wait(l)
  if l.cost > l.capacity then return MAX end
  local w = math.ceil(tb_tat_at(l, now) + l.cost * l.interval - l.tau - now)
  if w < 0 then w = 0 end
  if l.reserved > 0 and not tb_fits(l, now + w) then
    -- the reservation holds the room until the leases end
    local w2 = math.ceil(tb_full_at(l) + l.cost * l.interval - l.tau - now)
    if w2 > w then w = w2 end
  end
  if w >= MAX then return MAX end
  return settle(l, w, tb_fits)
end

-- Takes tokens now: raises tat past the reservation's floor first, so the new tokens stack on the reserved ones.
local function tb_take(l, tokens)
  l.tat = tb_tat_at(l, now) + tokens * l.interval
end

local function tb_write(l, full_at)
  local value = fmt(math.ceil(l.tat))
  if l.reserved > 0 then
    value = value .. ':' .. fmt(l.reserved) .. ':' .. fmt(l.reserved_until) .. ':' .. fmt(l.reserved_since)
  elseif l.tat > now + l.tau then
    value = value .. ':owes'
  end
  put(l.i, value, math.ceil((full_at - now) / 1000))
end

function tb.finish(l, allowed)
  if allowed == 1 and l.cost > 0 then
    tb_take(l, l.cost)
    local most = tb_most_ahead(l)
    if l.tat > most then   -- a settlement's charge beyond what arithmetic and the TTL carry: the rest is not taken
      l.cut = math.min(l.cost, math.ceil((l.tat - most) / l.interval - EPSILON))
      l.tat = most
    end
    l.changed = true
  end
  local full_at = tb_full_at(l)
  if l.changed then tb_write(l, full_at) end
  local available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
  if available < 0 then available = 0 end
  return math.floor(available + EPSILON), math.ceil((full_at - now) / 1000)
end

-- The tokens the bucket counts as taken now (after read): what it lacks of its capacity, debt included.
function tb.taken(l)
  return (tb_tat_at(l, now) - now) / l.interval
end

-- The cost goes back to the stored tat (a full bucket stays full); the TTL is kept.
function tb.refund(l)
  local value = redis.pcall('GET', KEYS[l.i])
  if type(value) == 'table' and value.err ~= nil then wrong_type(value) end
  if type(value) ~= 'string' then return 0 end
  local tat, rest = string.match(value, '^([^:]+)(.*)$')
  tat = tonumber(tat)
  if not usable(tat) then return 0 end
  tat = math.ceil(tat - l.cost * l.period / l.refill)
  redis.call('SET', KEYS[l.i], fmt(tat) .. rest, 'KEEPTTL')
  return 1
end

-- Gives the instance's previous lease back (operation 'lease'; it started at returned_start and ends at
-- returned_until, Redis time). If the reservation still holds it (taken after the reservation's first lease: no
-- reservation ended since), its tokens leave the reservation and count as spent now (the bucket holds no more than
-- before, and refills from here), and, while it runs, its unused tokens come back. A lease that has ended gives
-- nothing back. A bucket read beyond empty by a return alone (cost 0, want 0) is one whose last limits were others:
-- left as stored.
function tb.give_back(l, returned, unused, returned_start, returned_until, want)
  if l.reserved > 0 and returned_start >= l.reserved_since and not (l.clamped and l.cost == 0 and want == 0) then
    local floor = tb_reserved_floor(l, now)
    if floor > l.tat then l.tat = floor end
    l.reserved = l.reserved - returned
    if l.reserved <= 0 then l.reserved = 0; l.reserved_until = 0; l.reserved_since = 0 end
    if now < returned_until then
      l.tat = l.tat - unused * l.interval
      if l.tat < now then l.tat = now end
    end
    l.changed = true
    l.available = l.capacity - (tb_tat_at(l, now) - now) / l.interval
  end
end

-- Takes the request's cost and the granted lease's tokens now, reserving the granted ones until lease_until; the
-- state is written by finish.
function tb.lease(l, granted, lease_until)
  tb_take(l, l.cost + granted)
  if granted > 0 then
    if l.reserved == 0 then l.reserved_since = now end
    l.reserved = l.reserved + granted
    if lease_until > l.reserved_until then l.reserved_until = lease_until end
  end
  l.changed = l.changed or l.cost + granted > 0
end

return tb
end
