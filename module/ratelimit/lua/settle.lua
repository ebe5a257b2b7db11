-- Charges the difference between a reply's tokens and its estimate.
-- KEYS: tokens bucket. ARGV: tokens per minute, tokens to charge (negative:
-- a refund). The debt left is at most cap, as bucket.go's adjust.
local cap, delta = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_us()
bucket_store(KEYS[1], cap, math.max(-cap, math.min(cap, bucket_load(KEYS[1], cap, now) - delta)), now)
return 0
