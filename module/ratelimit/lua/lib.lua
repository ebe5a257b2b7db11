-- Helpers every modelgate rate-limit script starts with. Time is Redis
-- time (TIME), never a gateway's clock, so instances whose clocks disagree
-- still share one limit.

-- now_us is Redis time in microseconds.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- A bucket is a token bucket refilled continuously at cap per minute, kept
-- in a hash {t = tokens, ts = time of t in microseconds}. The rules are
-- bucket.go's: tokens may go below zero (a debt left by a reply that used
-- more than its estimate, at most cap) and never above cap; a missing bucket is full.
local function bucket_load(key, cap, now)
  local v = redis.call('HMGET', key, 't', 'ts')
  local tokens, ts = tonumber(v[1]), tonumber(v[2])
  if tokens == nil or ts == nil then
    return cap
  end
  if now > ts then
    tokens = tokens + (now - ts) * cap / 60e6
  end
  return math.min(cap, tokens)
end

-- bucket_reset is how long, in microseconds, until the bucket is full.
local function bucket_reset(cap, tokens)
  if tokens >= cap then
    return 0
  end
  return math.ceil((cap - tokens) * 60e6 / cap)
end

-- bucket_store saves the bucket until it would be full again, after which
-- a missing bucket means the same.
local function bucket_store(key, cap, tokens, now)
  redis.call('HSET', key, 't', string.format('%.17g', tokens), 'ts', string.format('%.17g', now))
  redis.call('PEXPIRE', key, math.floor(bucket_reset(cap, tokens) / 1000) + 1000)
end
