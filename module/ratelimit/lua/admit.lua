-- Admits one request, or refuses it without charging anything.
-- KEYS: requests bucket, tokens bucket, concurrency leases (a sorted set of
-- lease ids scored by their expiry in Redis milliseconds).
-- ARGV: requests per minute, tokens per minute, max concurrent (0: no
-- limit), estimated tokens, lease id, lease time to live in milliseconds,
-- the caller's deadline in Redis microseconds (0: none), and 1 to check
-- only: refuse what the requests and concurrency limits refuse now and
-- charge nothing either way.
-- Returns {refused by (0 none, 1 requests, 2 tokens, 3 concurrency, 4 past
-- the caller's deadline: a caller that gave up is charged nothing and
-- holds no slot), retry after, requests left, requests reset, tokens left,
-- tokens reset, Redis time}, durations and times in microseconds.
local rpm, tpm, maxc, est = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl, deadline = tonumber(ARGV[6]), tonumber(ARGV[7])
local now = now_us()
if deadline > 0 and now > deadline then
  return {4, 0, 0, 0, 0, 0, now}
end
local now_ms = math.floor(now / 1000)
local req, tok = 0, 0
if rpm > 0 then
  req = bucket_load(KEYS[1], rpm, now)
end
if tpm > 0 then
  tok = bucket_load(KEYS[2], tpm, now)
end
local function answer(refused, wait)
  return {refused, wait, math.floor(req), bucket_reset(rpm, req), math.floor(tok), bucket_reset(tpm, tok), now}
end

if maxc > 0 then
  -- Leases of instances that died without freeing them end here.
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now_ms)
  if redis.call('ZCARD', KEYS[3]) >= maxc then
    return answer(3, 1000000)
  end
end
if rpm > 0 and req < 1 then
  return answer(1, math.ceil((1 - req) * 60e6 / rpm))
end
if ARGV[8] == '1' then
  return answer(0, 0)
end
if tpm > 0 and est > 0 then
  if est > tpm then
    return answer(2, 60000000)
  end
  if tok < est then
    return answer(2, math.ceil((est - tok) * 60e6 / tpm))
  end
end

if rpm > 0 then
  req = req - 1
  bucket_store(KEYS[1], rpm, req, now)
end
if tpm > 0 and est > 0 then
  tok = tok - est
  bucket_store(KEYS[2], tpm, tok, now)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[3], now_ms + ttl, ARGV[5])
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return answer(0, 0)
