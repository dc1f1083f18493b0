-- Paces wrk to a fixed total rate: every connection waits CONNECTIONS * 1000 / RATE ms between its requests.
-- (Closed loop per connection, so a stall also delays that connection's next request; the p99 is still the
-- latency of the requests sent.) Used by bench/gateway/run.mjs for the latency runs.
local rate = tonumber(os.getenv("RATE") or "2000")
local connections = tonumber(os.getenv("CONNECTIONS") or "64")
local pause = connections * 1000 / rate
function delay()
  return pause
end
