-- Extends the lease of a request still in flight. A lease already reaped
-- (its instance was too late) stays gone rather than coming back after a
-- release that raced with this renewal.
-- KEYS: concurrency leases. ARGV: lease id, lease time to live in
-- milliseconds.
local ttl = tonumber(ARGV[2])
if redis.call('ZADD', KEYS[1], 'XX', 'CH', math.floor(now_us() / 1000) + ttl, ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 0
