-- wrk script of the route comparison (issue 14): one API key per request in the X-API-Key header, drawn from
-- WRK_KEYS keys named bench-key-000000, bench-key-000001, ... (every key a client of its own in the benchmark
-- gateway), in one of two distributions (WRK_DISTRIBUTION):
--   uniform  rotation over the keys in order: every key equally often, each once per pass
--   zipf     a Zipf law: the key of rank k (0-based) with probability (k+1)^-s / H(n, s); the cumulative table is
--            read from the file WRK_ZIPF_CDF (one probability per line, written by `BenchmarkMain zipf-table`), a key
--            is drawn per request by binary search of math.random() in it; seeded by WRK_SEED (default 1)
-- WRK_START (uniform only, default 0): the rotation starts at this key, so that runs one after the other can
-- continue a pass. Every request is formatted once, in init. Run with -t1 (one Lua state).
local n = tonumber(os.getenv("WRK_KEYS") or "10000")
local distribution = os.getenv("WRK_DISTRIBUTION") or "uniform"
local requests = {}
local cdf = {}
local i = tonumber(os.getenv("WRK_START") or "0") % n

init = function(args)
  for k = 0, n - 1 do
    requests[k] = wrk.format("GET", wrk.path, { ["X-API-Key"] = string.format("bench-key-%06d", k) })
  end
  if distribution == "zipf" then
    local file = os.getenv("WRK_ZIPF_CDF") or error("WRK_ZIPF_CDF: the cumulative table's file is not set")
    local k = 0
    for line in io.lines(file) do
      cdf[k] = tonumber(line)
      k = k + 1
    end
    if k ~= n then error(string.format("%s has %d entries, WRK_KEYS is %d", file, k, n)) end
    math.randomseed(tonumber(os.getenv("WRK_SEED") or "1"))
  elseif distribution ~= "uniform" then
    error("WRK_DISTRIBUTION must be uniform or zipf, was " .. distribution)
  end
end

-- the first rank k with u < cdf[k]
local function draw(u)
  local lo, hi = 0, n - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if u < cdf[mid] then hi = mid else lo = mid + 1 end
  end
  return lo
end

request = function()
  if distribution == "zipf" then
    return requests[draw(math.random())]
  end
  local r = requests[i]
  i = (i + 1) % n
  return r
end
