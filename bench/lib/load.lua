-- wrk script for bench/lib/load.mjs: one request, sent over and over, and a JSON line at the end.
--   CERTDESK_METHOD (GET), CERTDESK_KEY (an API key, optional), CERTDESK_BODY (JSON, optional)
local method = os.getenv("CERTDESK_METHOD") or "GET"
local key = os.getenv("CERTDESK_KEY") or ""
local body = os.getenv("CERTDESK_BODY") or ""
wrk.method = method
if key ~= "" then wrk.headers["x-api-key"] = key end
if body ~= "" then
  wrk.body = body
  wrk.headers["content-type"] = "application/json"
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"non2xx":%d,"timeouts":%d,"p50Ms":%.3f,"p99Ms":%.3f,"bytes":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.bytes))
end
