-- Instance heartbeat: records that one gateway instance is alive and returns how many are.
-- KEYS[1]  sorted set of instance ids scored by the time (ms, Redis clock) they were last seen
-- ARGV[1]  this instance's id
-- ARGV[2]  how long (ms) an instance counts as alive after its last heartbeat
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local alive = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - alive)
redis.call('PEXPIRE', KEYS[1], alive)
return redis.call('ZCARD', KEYS[1])
