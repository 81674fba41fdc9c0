-- wrk script: one pre-formatted request per client address, X-Forwarded-For rotating over WRK_CLIENTS addresses
-- (default 10,000; 10.0.0.0 upwards). With ratelimit.trusted-proxies=1 the gateway limits each address as its own
-- client, so the RateLimit filter sees 10,000 rotating clients. The same script drives the route without the filter.
local n = tonumber(os.getenv("WRK_CLIENTS") or "10000")
local requests = {}
local i = 0

init = function(args)
  for k = 0, n - 1 do
    local ip = string.format("10.%d.%d.%d", math.floor(k / 65536) % 256, math.floor(k / 256) % 256, k % 256)
    requests[k] = wrk.format("GET", wrk.path, { ["X-Forwarded-For"] = ip })
  end
end

request = function()
  local r = requests[i]
  i = (i + 1) % n
  return r
end
