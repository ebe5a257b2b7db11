-- Reserves a request's maximum cost against every budget that applies to
-- it, or refuses it without reserving anything.
-- KEYS: the spend counters (picodollars, one per budget and period).
-- ARGV: the cost; then each counter's limit; then each counter's expiry
-- (Unix milliseconds).
-- Returns {index of the counter that refused (0: none), the spend of each
-- counter before, as strings}. Sums are exact: INCRBY adds 64-bit
-- integers; only the comparison with the limit is made in doubles, which
-- counters below 2^53 picodollars (9,007 USD) compare exactly.
local n = #KEYS
local cost = ARGV[1]
local out = {0}
for i = 1, n do
  local spent = redis.call('GET', KEYS[i]) or '0'
  out[i + 1] = spent
  if tonumber(spent) + tonumber(cost) > tonumber(ARGV[1 + i]) then
    out[1] = i
    return out
  end
end
for i = 1, n do
  redis.call('INCRBY', KEYS[i], cost)
  redis.call('PEXPIREAT', KEYS[i], ARGV[1 + n + i])
end
return out
