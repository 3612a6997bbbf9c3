-- GCRA over every key at once (KEYS), on Redis's own clock so that every
-- replica agrees. ARGV holds, for each key in turn, its emission interval
-- and its burst tolerance, in microseconds. A request is allowed only when
-- every key allows it; then each key's theoretical arrival time moves on
-- (kept no longer than it matters). Returns 0 when allowed, else the
-- microseconds until it would be.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local next_tat = {}
local wait = 0
for i, key in ipairs(KEYS) do
    local interval = tonumber(ARGV[2 * i - 1])
    local tolerance = tonumber(ARGV[2 * i])
    local tat = tonumber(redis.call('GET', key) or now)
    if tat < now then
        tat = now
    end
    local new_tat = tat + interval
    local allow_at = new_tat - tolerance
    if allow_at > now and allow_at - now > wait then
        wait = allow_at - now
    end
    next_tat[i] = new_tat
end
if wait > 0 then
    return wait
end
for i, key in ipairs(KEYS) do
    redis.call('SET', key, next_tat[i], 'PX', math.floor((next_tat[i] - now) / 1000) + 1)
end
return 0
