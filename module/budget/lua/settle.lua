-- Settles a request: adds the difference between its cost and its
-- reservation (negative: a refund) to every counter it reserved in.
-- KEYS: the spend counters. ARGV: the difference; then each counter's
-- expiry (Unix milliseconds). A counter never goes below zero (its state
-- was lost), nor above 4e18 (within 64 bits whatever settles next).
for i = 1, #KEYS do
  local v = redis.call('INCRBY', KEYS[i], ARGV[1])
  if v < 0 then
    redis.call('SET', KEYS[i], '0')
  elseif v > 4e18 then
    redis.call('SET', KEYS[i], '4000000000000000000')
  end
  redis.call('PEXPIREAT', KEYS[i], ARGV[1 + i])
end
return 0
