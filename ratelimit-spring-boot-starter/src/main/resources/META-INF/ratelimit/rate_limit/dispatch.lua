-- The rate limit script's contract and its dispatcher. The script is the files of this folder joined in the order of
-- LuaScript.RATE_LIMIT_SOURCES (common.lua, one file per algorithm, this one last) and loaded as one script: several
-- limits, each enforced by its own algorithm, checked and consumed all-or-nothing, atomically (one script run covers
-- every limit of a request); the same script takes token leases, gives back the tokens of an abandoned check and gives
-- back a request's concurrency slots, reads and tops up calendar quotas. Design notes: src/docs/design/redis-script.md.
--
-- KEYS[i]   state of limit i of one client in one endpoint group, i = 1 .. n (all KEYS share one hash tag, so one
--           Cluster slot); then one more key per concurrency limit, in the order of those limits: the limit's hold
--           statistics (KEYS[n + j] for the j-th concurrency limit)
-- ARGV[1]   operation: 'check' (check and consume), 'acquire' (check and consume, and take a slot in every
--           concurrency limit), 'lease' (check and consume, and take a lease of extra tokens for the instance to
--           spend locally, giving back its previous lease; token buckets only), 'refund' (give back the tokens of an
--           allowed check that the caller abandoned: it timed out and was decided without Redis, but Redis ran it
--           anyway), 'settle' (charge or give back the difference between what an admitted request reserved and
--           what its answer used), 'release' (give back the slot of a request that completed in every concurrency
--           limit, its hold time counted into the average, and refund tokens) or 'abandon' (the same for a slot the
--           request never used: an abandoned or compensated check, a shutdown; its hold time is not counted),
--           'quota' (read each quota's period and use, writing nothing) or 'topup' (an operator grants a client's
--           quotas tokens in the current period); or 'batch': several of these calls in one run (its own layout and
--           reply: see the end of this file)
-- ARGV[2]   limit count n (= the number of limits; KEYS holds n plus the number of concurrency limits)
-- 'acquire', 'release' and 'abandon' only, ARGV[3]: the slot's id, unique per request and instance
-- 'check' ARGV[3], 'acquire' ARGV[4], 'lease' ARGV[8], 'settle' ARGV[3] (the last value before the limits of the
--           operations that charge): the deadline, in Redis time (microseconds since the epoch, a whole number >= 0):
--           the moment the gateway gives up waiting for this call. When Redis' now (TIME) is past it, the call reads
--           and writes nothing and returns the expired reply (a check, acquire or lease: the integer -1; a settle: an
--           empty array, as a one-limit settle's own reply may be {-1}), so that a call Redis runs after the gateway
--           gave up on it (a stall, a paused or slow Redis, a command retried after a reconnect) charges nothing: a
--           check decided without Redis takes nothing, a settlement the gateway counted as failed leaves the
--           reservation as it was. 0: no deadline (a gateway that does not know Redis' clock yet; the endpoint's
--           reads). 'refund', 'release' and 'abandon' carry none: run late, they only give back what is held
-- 'lease' only, ARGV[3..7]: tokens wanted for the lease (>= 0; granted at most half of what every limit holds after
--           the request), the lease's duration (microseconds; the same for the previous lease, whose start is its end
--           less it), then the instance's previous lease of these limits: tokens it was granted, tokens of it left
--           unspent, and its end (Redis time, microseconds, as this script returned it; all three 0 when there is
--           none). The unspent tokens come back only while the previous lease runs (Redis time before its end); a
--           lease given back at or after its end gives nothing back, its reservation only is released. A lease given
--           back alone (cost 0, nothing wanted) under limits that read a bucket beyond empty (not that bucket's last
--           limits) leaves that bucket as stored: nothing back, the reservation kept until it ends
-- then, per limit, five values (from ARGV[3]; ARGV[4] for 'check', 'settle', 'release' and 'abandon'; ARGV[5] for
--           'acquire'; ARGV[9] for 'lease'):
--           algorithm code, capacity (tokens, 1 .. 2^53), refill tokens (1 .. 2^53), refill period (microseconds,
--           >= 1000), and the limit's cost: a whole number of tokens, its own per limit (a request may take 1 from a
--           limit counting requests and 4,000 from one counting LLM tokens):
--           'check', 'acquire', 'lease'  tokens the request takes (>= 0; 0 reads the limit without consuming); a
--                                        concurrency limit: 1 takes a slot ('acquire' only), 0 reads
--           'refund', 'release', 'abandon'  tokens to give back (>= 0); a concurrency limit: 0
--           'quota'                      0
--           'topup'                      tokens granted (0 .. 2^53; only a quota may take more than 0)
--           'settle'                     > 0: tokens charged now, even beyond what the limit holds (a token bucket
--                                        then owes them all, and refills from below zero; a window or quota
--                                        counts them beyond its capacity and carries the excess into the windows
--                                        or periods after until repaid); < 0: tokens given back; 0: left alone; a
--                                        concurrency limit: 0
--   The algorithm codes (each in its own file):
--   tb    token bucket: capacity tokens, refilled continuously with refill tokens per refill period
--   swl   sliding window log: at most capacity tokens admitted in any window of one refill period (exact)
--   swc   sliding window counter: the same, estimated from two fixed-window counts (approximate)
--   fw    fixed window: at most capacity tokens per refill-period window, aligned to the Unix epoch
--   cc    concurrency: at most capacity requests in flight; a slot not given back frees itself once it is one refill
--         period old
--   q     calendar quota: at most capacity tokens per period; its refill period is the period boundaries around the
--         gateway's time (four times in microseconds, comma-separated), and Redis' now picks the period (quota.lua)
--   The window algorithms take capacity tokens per window, and a concurrency limit capacity slots; their refill
--   tokens equal the capacity (not used here).
-- An unknown operation or algorithm code (a window or concurrency limit in a lease), a cost that is not a whole
-- number, negative outside a 'settle' or not 0 for a concurrency limit where it must be (a 'check' takes no slot),
-- not 0 in a 'quota', above 2^53 or not 0 for a limit other than a quota in a 'topup', a deadline that is not a whole
-- number >= 0, an argument count other than 2 + 5n (3 + 5n for 'check', 'settle', 'release' and 'abandon', 4 + 5n for
-- 'acquire', 8 + 5n for 'lease') or a key count other than n plus the concurrency limits is an error reply before
-- any write.
--
-- Time comes only from Redis TIME (microsecond precision): every gateway instance shares one clock. A clock stepping
-- back never makes room at once (a window stays the stored one; a token bucket gets no refill); a token bucket within
-- the step of empty is stored as empty at the earlier time, so it may regain at most the step's refill once the
-- clock has caught up.
--
-- 'check', 'acquire' and 'lease' past their deadline return the integer -1 (expired; nothing read or written).
-- Otherwise 'check' and 'acquire' return {allowed, then per limit: satisfied, remaining, retry_after_ms, reset_ms},
-- integers:
--   allowed        1 if every limit admitted cost tokens (and cost was taken from each, and a slot from each
--                  concurrency limit), else 0 (nothing taken)
--   satisfied      1 if this limit alone admitted cost tokens (a concurrency limit: a free slot)
--   remaining      whole tokens this limit would still admit now, after the decision (0 .. capacity); after a lease,
--                  without the leased tokens; a concurrency limit: free slots
--   retry_after_ms ms until this limit admits cost tokens (0 if satisfied): the smallest wait for which the same
--                  admission rule, evaluated that much later, admits the request, so waiting exactly the returned time
--                  succeeds (if nothing else consumes meanwhile). A concurrency limit: an estimate (see cc.wait)
--   reset_ms       ms until this limit has its whole capacity available again (a concurrency limit: at the latest,
--                  when the newest slot expires; a quota: when its period ends, even if nothing was counted in it)
-- 'lease' returns the same, then the tokens leased (0 .. wanted, the same from every limit, 0 when denied) and the
--   lease's end (Redis time, microseconds; 0 when nothing was leased): the instance spends the leased tokens until
--   then at most, and sends the three numbers of its lease back with its next 'lease' call (or alone, with cost 0
--   and nothing wanted, when it drops the lease).
-- Only an allowed request (or a returned lease, or a token bucket read beyond empty by a call of cost >= 1, or a
-- released slot) writes. Every written key gets a TTL that ends when its state no longer matters (the bucket is full
-- again, the log's newest entry has left the window, the counter no longer weighs, the window is over, the newest slot
-- has expired, the hold statistics are an hour unused), so idle clients cost no memory.
-- 'refund' returns the number of limits whose state was changed (an integer); a limit whose state has expired is
-- left alone, and no TTL changes. 'release' and 'abandon' return the same, a concurrency limit counting when it held
-- the slot and the slot had not expired.
-- 'settle' past its deadline returns an empty array (expired; nothing read or written). Otherwise it returns one
--   integer per limit, in order: the tokens it charged (> 0), or gave back (< 0), as its state
--   counts them. A limit charged is consumed as by an allowed check, its TTL set anew (a token bucket's to when its
--   debt is repaid; a fixed window's, sliding window counter's or quota's to when the excess it carries is repaid),
--   and answers the tokens taken: all of them, but for a debt that would run more than ten years ahead of now (a
--   token bucket: or its tau, if longer), where what fits is taken. A limit given tokens back is refunded (as
--   'refund') and answers at most what its state counted as taken (a bucket refilled meanwhile takes nothing back;
--   a sliding window counter: the stored count it takes from; a sliding window log: all of it; 0 when the state has
--   expired); 0 for the others.
-- 'topup' returns the tokens added, summed over the quotas given tokens: in the period that holds Redis' now, the
--   quota's use is lowered by them (it may go below zero: the client may be admitted more than its limit in that
--   period; a period's top-ups add up to at most 2^53 less the limit, so near that fewer are added than asked, or
--   none); the state is made for that period when it is absent or of another, and its TTL set to the period's end.
--   Redis time outside a quota's boundaries is an error before any write.
-- 'quota' returns three integers per limit, in order: for a quota, its use in the period that holds Redis' now (tokens
--   admitted less tokens topped up; below zero after a top-up beyond the use), that period's start and its end (Redis
--   time, microseconds); 0, 0, 0 for any other limit. It writes nothing; Redis time outside a quota's boundaries is an
--   error.
--
-- State: one key per limit, its layout in the algorithm's file (the key names differ per algorithm, so one algorithm
-- never reads another's state). Missing or corrupt state (nil, NaN, infinite, negative) is an unused limit: a full
-- bucket, an empty window, no slot taken.

-- An algorithm's functions are made on a run's first use of it: making all of them on every run (every EVALSHA)
-- would cost more than a check.
local DEFINE = { tb = define_tb, swl = define_swl, swc = define_swc, fw = define_fw, cc = define_cc, q = define_q }
local defined = {}

local function algorithm_of(code)   -- the algorithm of a code, nil for an unknown code
  local algorithm = defined[code]
  if algorithm == nil then
    local define = DEFINE[code]
    if define == nil then return nil end
    algorithm = define()
    defined[code] = algorithm
  end
  return algorithm
end

-- The reply of a check, acquire or lease run past its deadline.
local EXPIRED = -1

-- The reply of a settle run past its deadline (its own reply may be {-1}: one limit given back one token).
local SETTLE_EXPIRED = {}

-- One call (see the contract above), as sent alone or as one call of a batch.
local function run()
  local header = 2                       -- ARGV values before the limits
  local charges = false                  -- a check, acquire, lease or settle: its deadline is ARGV[header]
  if operation == 'lease' then
    header, charges = 8, true
  elseif operation == 'acquire' then
    header, charges = 4, true
    slot = ARGV[3]
  elseif operation == 'check' then
    header, charges = 3, true
  elseif operation == 'release' or operation == 'abandon' then
    header = 3
    slot = ARGV[3]
  elseif operation == 'settle' then
    header, charges = 3, true
  elseif operation ~= 'refund' and operation ~= 'topup'
      and operation ~= 'quota' then
    return redis.error_reply('ERR unknown rate limit operation \'' .. tostring(operation) .. '\'')
  end
  if n == nil or #ARGV ~= header + 5 * n then
    return redis.error_reply('ERR rate limit ' .. operation .. ' takes ' .. header .. ' + 5n arguments (n = '
      .. tostring(ARGV[2]) .. ' limits), got ' .. #ARGV)
  end
  local limits = {}
  local slots = 0                        -- concurrency limits
  for i = 1, n do
    local at = header + 5 * (i - 1) + 1
    local code = ARGV[at]
    local algorithm = algorithm_of(code)
    if algorithm == nil or (operation == 'lease' and code ~= 'tb') then
      return redis.error_reply('ERR unknown rate limit algorithm code \'' .. code .. '\' for limit ' .. i
        .. ' of a ' .. operation)
    end
    local limit_cost = tonumber(ARGV[at + 4])
    if limit_cost == nil or limit_cost ~= math.floor(limit_cost) or (limit_cost < 0 and operation ~= 'settle')
        or (code == 'cc' and limit_cost ~= 0 and operation ~= 'acquire')
        or (operation == 'quota' and limit_cost ~= 0)
        or (operation == 'topup' and limit_cost ~= 0 and (code ~= 'q' or limit_cost > MAX)) then
      return redis.error_reply('ERR rate limit ' .. operation .. ': limit ' .. i .. ' (' .. code .. ') cannot cost \''
        .. tostring(ARGV[at + 4]) .. '\'')
    end
    limits[i] = { i = i, code = code, algorithm = algorithm, capacity = tonumber(ARGV[at + 1]),
                  refill = tonumber(ARGV[at + 2]), period = tonumber(ARGV[at + 3]), spec = ARGV[at + 3],
                  cost = limit_cost }
    if code == 'cc' then
      slots = slots + 1
      limits[i].stats = n + slots
    end
  end
  if #KEYS ~= n + slots then
    return redis.error_reply('ERR rate limit ' .. operation .. ' takes n + ' .. slots .. ' keys (n = ' .. n
      .. ' limits, ' .. slots .. ' of them concurrency limits), got ' .. #KEYS)
  end

  if operation == 'refund' then
    local refunded = 0
    for i = 1, n do
      refunded = refunded + limits[i].algorithm.refund(limits[i])
    end
    return refunded
  end

  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])

  if charges then
    local deadline = tonumber(ARGV[header])
    if not usable(deadline) or deadline ~= math.floor(deadline) then
      return redis.error_reply('ERR rate limit ' .. operation .. ' takes a deadline in microseconds >= 0, got \''
        .. tostring(ARGV[header]) .. '\'')
    end
    if deadline > 0 and now > deadline then
      -- the gateway has given up on this call: nothing read, nothing written
      if operation == 'settle' then return SETTLE_EXPIRED end
      return EXPIRED
    end
  end

  if operation == 'topup' or operation == 'quota' then
    -- every quota read first: an error (Redis time outside its boundaries) comes before any write
    for i = 1, n do
      local l = limits[i]
      if l.code == 'q' and (operation == 'quota' or l.cost > 0) then l.algorithm.read(l) end
    end
    if operation == 'quota' then
      local periods = {}
      for i = 1, n do
        local l = limits[i]
        if l.code == 'q' then
          periods[3 * i - 2], periods[3 * i - 1], periods[3 * i] = l.used, l.start, l.finish_at
        else
          periods[3 * i - 2], periods[3 * i - 1], periods[3 * i] = 0, 0, 0
        end
      end
      return periods
    end
    local topped = 0
    for i = 1, n do
      local l = limits[i]
      if l.cost > 0 then topped = topped + l.algorithm.top_up(l) end
    end
    return topped
  end

  if operation == 'settle' then
    -- per limit: the tokens it took (> 0) or gave back (< 0), as its state counts them
    local settled = {}
    for i = 1, n do
      local l = limits[i]
      local change = 0
      if l.cost > 0 then
        l.algorithm.read(l)
        l.algorithm.finish(l, 1)
        change = l.cost - (l.cut or 0)
      elseif l.cost < 0 then
        l.cost = -l.cost
        local taken = l.cost                    -- a sliding window log tells no count: all of it
        if l.algorithm.taken then
          taken = 0
          -- a quota read outside its boundaries (an error) is still refunded, reported as 0
          if pcall(l.algorithm.read, l) then taken = l.algorithm.taken(l) end
        end
        if l.algorithm.refund(l) == 1 and taken > 0 then
          change = -math.floor(math.min(l.cost, taken) + 0.5)
        end
      end
      settled[i] = change
    end
    return settled
  end

  if operation == 'release' or operation == 'abandon' then
    local released = 0
    for i = 1, n do
      local l = limits[i]
      if l.code == 'cc' then
        released = released + l.algorithm.release(l)
      elseif l.cost > 0 then
        released = released + l.algorithm.refund(l)
      end
    end
    return released
  end

  local allowed = 1
  for i = 1, n do
    local l = limits[i]
    l.algorithm.read(l)
  end

  local want, duration, returned, unused, returned_until = 0, 0, 0, 0, 0
  if operation == 'lease' then
    want = tonumber(ARGV[3])
    duration = tonumber(ARGV[4])
    returned = tonumber(ARGV[5])
    unused = tonumber(ARGV[6])
    returned_until = tonumber(ARGV[7])
    if not (usable(want) and usable(duration) and usable(returned) and usable(unused) and usable(returned_until))
        or unused > returned then
      return redis.error_reply('ERR rate limit lease takes whole numbers >= 0 (unused <= returned)')
    end
    -- the instance's previous lease ends (its start is its end less the duration)
    if returned > 0 then
      for i = 1, n do
        limits[i].algorithm.give_back(limits[i], returned, unused, returned_until - duration, returned_until, want)
      end
    end
  end

  for i = 1, n do
    local l = limits[i]
    l.satisfied = l.algorithm.admits(l)
    if not l.satisfied then allowed = 0 end
  end

  -- A new lease: at most half of what every limit holds after this request, so leases shrink to nothing as a bucket
  -- nears empty and its last tokens are decided one request at a time.
  local granted = 0
  if operation == 'lease' and allowed == 1 and want >= 1 and duration >= 1 then
    granted = want
    for i = 1, n do
      local room = math.floor((limits[i].available - limits[i].cost) / 2 + EPSILON)
      if room < granted then granted = room end
    end
    if granted < 0 then granted = 0 end
  end
  local lease_until = 0
  if operation == 'lease' and allowed == 1 then
    lease_until = now + duration
    for i = 1, n do
      limits[i].algorithm.lease(limits[i], granted, lease_until)
    end
  end
  local consumes = allowed
  if operation == 'lease' then consumes = 0 end   -- taken above

  -- made with room for one limit's four values: grown from { allowed } one value at a time, the table would be
  -- reallocated three times (the nils end the reply, as Redis reads a table up to its first nil)
  local result = { allowed, nil, nil, nil, nil }
  local at = 1                           -- result's last index
  for i = 1, n do
    local l = limits[i]
    local satisfied = 1
    local retry_ms = 0
    if not l.satisfied then
      satisfied = 0
      retry_ms = math.ceil(l.algorithm.wait(l) / 1000)
    end
    local remaining, reset_ms = l.algorithm.finish(l, consumes)
    if remaining > l.capacity then remaining = l.capacity end
    if remaining < 0 then remaining = 0 end
    if retry_ms > MAX then retry_ms = MAX end
    if reset_ms > MAX then reset_ms = MAX end
    result[at + 1] = satisfied
    result[at + 2] = remaining
    result[at + 3] = retry_ms
    result[at + 4] = reset_ms
    at = at + 4
  end
  if operation == 'lease' then
    if granted == 0 then lease_until = 0 end
    result[at + 1] = granted
    result[at + 2] = lease_until
  end
  return result
end

-- 'batch': several calls in one script run, each run as if sent alone, in order (one call's writes are seen by the
-- next). ARGV: 'batch', the call count m, then per call its key count and its argument count, then the calls'
-- arguments, call after call; KEYS: the calls' keys, call after call (on a Cluster all in one slot). Returns one
-- reply per call, in order: what that call returns alone, or for a call that returns an error reply alone or raises
-- an error (a write Redis refuses: OOM, an ACL), the error's message as a string (an error element would fail the
-- whole reply in clients such as Lettuce); the calls after it run on.
-- Counts that are not whole numbers, or that do not add up to the keys and arguments sent, are an error reply
-- before any call runs.
if ARGV[1] ~= 'batch' then
  return run()
end
local batch_keys, batch_args = KEYS, ARGV
local calls = tonumber(batch_args[2])
local function whole(x, least) return x ~= nil and x == math.floor(x) and x >= least end
if not whole(calls, 1) or #batch_args < 2 + 2 * calls then
  return redis.error_reply('ERR rate limit batch takes the call count and two counts per call')
end
local key_total, arg_total = 0, 2 + 2 * calls
for j = 1, calls do
  local key_count, arg_count = tonumber(batch_args[1 + 2 * j]), tonumber(batch_args[2 + 2 * j])
  if not whole(key_count, 0) or not whole(arg_count, 1) then
    return redis.error_reply('ERR rate limit batch call ' .. j .. ' takes a whole key count >= 0 and argument '
      .. 'count >= 1')
  end
  key_total, arg_total = key_total + key_count, arg_total + arg_count
end
if key_total ~= #batch_keys or arg_total ~= #batch_args then
  return redis.error_reply('ERR rate limit batch counts add up to ' .. key_total .. ' keys and ' .. arg_total
    .. ' arguments, got ' .. #batch_keys .. ' and ' .. #batch_args)
end
local replies = {}
local key_at, arg_at = 0, 2 + 2 * calls
for j = 1, calls do
  local key_count, arg_count = tonumber(batch_args[1 + 2 * j]), tonumber(batch_args[2 + 2 * j])
  KEYS = { unpack(batch_keys, key_at + 1, key_at + key_count) }
  ARGV = { unpack(batch_args, arg_at + 1, arg_at + arg_count) }
  key_at, arg_at = key_at + key_count, arg_at + arg_count
  operation, n, slot, now = ARGV[1], tonumber(ARGV[2]), nil, nil
  local ran, reply = pcall(run)          -- an error raised by this call (a refused write) ends this call only
  if not ran then reply = (type(reply) == 'table' and reply.err ~= nil) and reply or { err = tostring(reply) } end
  if type(reply) == 'table' and reply.err ~= nil then reply = reply.err end
  replies[j] = reply
end
return replies
