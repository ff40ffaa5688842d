-- wrk script for the mixed-load section of `npm run bench` (bench/lib/mixed.mjs starts it).
--   CERTDESK_MIX=mixed   a fixed cycle of POST /orders, GET /orders?limit=50&offset=…,
--                        GET /stats, GET /products: one write to three reads
--   CERTDESK_MIX=writes  POST /orders only
--   CERTDESK_MIX=reads   the three GETs only, in the same cycle
-- Each request comes from a reseller drawn at random (a fixed seed, so every run draws the
-- same sequence) out of CERTDESK_KEYS (comma separated API keys), as independent scripts of
-- several resellers would send them; a list read asks for one of CERTDESK_PAGES pages (offsets
-- 0, 50, …). When wrk is done the script prints one JSON line with its counts.
local keys = {}
for k in string.gmatch(os.getenv("CERTDESK_KEYS") or "", "[^,]+") do keys[#keys + 1] = k end
if #keys == 0 then error("CERTDESK_KEYS is empty") end
local mix = os.getenv("CERTDESK_MIX") or "mixed"
local pages = tonumber(os.getenv("CERTDESK_PAGES") or "4")
local body = '{"product_id":2,"domain":"mixed-load.example.com","period":12}'
local n = 0
math.randomseed(20261121)

local function get(path, key)
  return wrk.format("GET", path, { ["x-api-key"] = key, ["accept"] = "application/json" })
end

local cycle = {
  function(key)
    return wrk.format("POST", "/orders", { ["x-api-key"] = key, ["content-type"] = "application/json" }, body)
  end,
  function(key) return get("/orders?limit=50&offset=" .. (50 * (math.random(pages) - 1)), key) end,
  function(key) return get("/stats", key) end,
  function(key) return get("/products", key) end
}

request = function()
  local slot
  if mix == "writes" then slot = 1
  elseif mix == "reads" then slot = 2 + n % 3
  else slot = 1 + n % 4 end
  n = n + 1
  return cycle[slot](keys[math.random(#keys)])
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"non2xx":%d,"timeouts":%d,"p50Ms":%.3f,"p99Ms":%.3f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
