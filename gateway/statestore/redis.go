package statestore

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisOptions configure a Redis (or Valkey) backend.
type RedisOptions struct {
	// URL is redis://[user:password@]host:port[/db], or rediss:// for
	// TLS; the password is taken from it.
	URL string
	// Prefix starts every key, so that several deployments can share one
	// server.
	Prefix string
	// DialTimeout, ReadTimeout and WriteTimeout bound one connection
	// attempt and one command's reads and writes; 0 is go-redis's default
	// (5s, 3s, 3s).
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// MaxValue bounds one value's bytes (before compression): Put returns
	// ErrTooLarge above it. 0 is DefaultMaxValue.
	MaxValue int
	// TenantBytes and TenantEntries, when set, bound what one tenant holds
	// as Memory's Limits do: a Put that would pass them first drops the
	// tenant's values nearest to expiring (with one ttl for all, the least
	// recently used). Bytes are counted as the server keeps them
	// (compressed), plus the key and Overhead; a value larger than
	// TenantBytes alone is ErrTooLarge. 0 is no bound.
	TenantBytes   int64
	TenantEntries int
	// OnStateChange, when set, is called with the error when the server
	// stops answering and with nil when it answers again: once per outage,
	// in order, from the goroutine whose call saw the change. It must not
	// call the store.
	OnStateChange func(err error)
}

// DefaultMaxValue is the largest value a Redis store keeps by default.
const DefaultMaxValue = 4 << 20

// compressAbove is the size from which values are compressed: below it
// the CPU costs more than the bytes saved on the wire and in the server.
const compressAbove = 1 << 10

// The one-byte header of a stored value, saying how its payload is kept.
// The header is followed by the value's ttl in milliseconds, in decimal,
// and a colon, so that Get can restart the ttl in the same atomic step as
// it reads the value.
const (
	codecRaw     = 'r'
	codecDeflate = 'z'
)

// Redis is a Store and Counter in a Redis or Valkey server, shared by
// every replica that uses the same server and prefix.
//
// Keys carry the prefix and a format version: a value is
// <prefix>v1:<tenant>:<key> and a counter <prefix>c1:<tenant>:<window in
// ms>:<key>, with ':' and '%' in the tenant percent-escaped so that no two
// (tenant, key) pairs share a key.
//
// Bounds: one value is bounded by MaxValue. With TenantBytes or
// TenantEntries, each tenant's values are indexed (a sorted set of keys by
// expiry, <prefix>i1:<tenant>, and a hash of their sizes and total,
// <prefix>s1:<tenant>), kept by the same scripts that put, get and delete,
// so that the bound holds across replicas; Put, Get and Delete stay one
// round trip each. The whole server is bounded by its maxmemory: run it
// with maxmemory-policy volatile-lru, so that when full it drops the least
// recently used values, every one of which has a ttl. A value the server
// drops so is uncharged from its tenant when next asked for or when its
// ttl would have ended; an index the server drops lets its tenant hold up
// to its bound again.
//
// When the server cannot be reached every call returns an error naming it
// (statestore: redis at host:port: ...), never a miss. go-redis reconnects
// on later calls, pacing its dials once they fail; the Redis value stays
// usable and OnStateChange says when the outage starts and ends.
type Redis struct {
	client   *redis.Client
	addr     string
	prefix   string
	maxValue int
	onState  func(error)

	indexed       bool // tenants' values are indexed to bound them
	tenantBytes   int64
	tenantEntries int

	mu   sync.Mutex // orders state changes and their callbacks
	down atomic.Bool
}

var (
	_ Store   = (*Redis)(nil)
	_ Counter = (*Redis)(nil)
)

// NewRedis returns a store using the server opts.URL names. It does not
// connect: the first call (or Health) does.
func NewRedis(opts RedisOptions) (*Redis, error) {
	o, err := redis.ParseURL(opts.URL)
	if err != nil {
		// url.Parse's error quotes the URL, password and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("statestore: redis URL: %v (want redis://[user:password@]host:port[/db], or rediss:// for TLS)", err)
	}
	if opts.DialTimeout > 0 {
		o.DialTimeout = opts.DialTimeout
	}
	if opts.ReadTimeout > 0 {
		o.ReadTimeout = opts.ReadTimeout
	}
	if opts.WriteTimeout > 0 {
		o.WriteTimeout = opts.WriteTimeout
	}
	o.ContextTimeoutEnabled = true
	// A request that needs state waits for one dial and one retry (a
	// connection the server dropped while idle), not go-redis's five dials
	// and three retries: during an outage it gets its error at once. Once
	// as many dials as the pool holds connections have failed, go-redis
	// fails calls without dialing and probes the server once a second.
	o.DialerRetries = 1
	o.MaxRetries = 1
	// Neither CLIENT SETINFO nor maintenance notifications exist before
	// Redis 7.2: asking costs a round trip per connection for nothing.
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if opts.MaxValue <= 0 {
		opts.MaxValue = DefaultMaxValue
	}
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	return &Redis{
		client:   redis.NewClient(o),
		addr:     o.Addr,
		prefix:   opts.Prefix,
		maxValue: opts.MaxValue,

		indexed:       opts.TenantBytes > 0 || opts.TenantEntries > 0,
		tenantBytes:   opts.TenantBytes,
		tenantEntries: opts.TenantEntries,
		onState:       opts.OnStateChange,
	}, nil
}

// go-redis logs each failed dial to stderr, many a second in an outage.
// The store reports outages once, through OnStateChange, and every failure
// through its errors, so NewRedis silences go-redis's logger, which is the
// process's: hookhost has no other go-redis client.
var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Addr is the server's host:port (or socket path).
func (r *Redis) Addr() string { return r.addr }

// Close closes the connections to the server.
func (r *Redis) Close() error { return r.client.Close() }

// Health asks the server whether it answers.
func (r *Redis) Health(ctx context.Context) error {
	return r.check(ctx, r.client.Ping(ctx).Err())
}

// check turns err into the backend's error and keeps track of whether the
// server serves: a call that succeeds says it does; one that cannot reach
// it, or that it refuses whatever the call (loading, read-only, full of
// clients, wrong password), that it does not. Other refusals (out of
// memory for a write) and a cancelled or expired context say neither.
func (r *Redis) check(ctx context.Context, err error) error {
	var reply redis.Error
	switch {
	case err == nil || errors.Is(err, redis.Nil):
		r.setState(nil)
		return err
	case ctx.Err() != nil:
	case unusable(err):
		r.setState(err)
	case errors.As(err, &reply):
	default:
		r.setState(err)
	}
	return fmt.Errorf("statestore: redis at %s: %w", r.addr, err)
}

func unusable(err error) bool {
	return redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err) ||
		redis.IsClusterDownError(err) || redis.IsTryAgainError(err) || redis.IsMaxClientsError(err) ||
		redis.IsAuthError(err) || redis.IsPermissionError(err)
}

func (r *Redis) setState(err error) {
	if r.down.Load() == (err != nil) {
		return // the common case, without the lock
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down.Load() == (err != nil) {
		return
	}
	r.down.Store(err != nil)
	if r.onState != nil {
		if err != nil {
			err = fmt.Errorf("statestore: redis at %s: %w", r.addr, err)
		}
		r.onState(err)
	}
}

// escapeTenant keeps a tenant from reaching into the part of a key that
// follows it.
var escapeTenant = strings.NewReplacer("%", "%25", ":", "%3A")

func (r *Redis) valueKey(tenant, key string) string {
	return r.prefix + "v1:" + escapeTenant.Replace(tenant) + ":" + key
}

// indexKeys are a tenant's index of keys by expiry and of their sizes.
func (r *Redis) indexKeys(tenant string) (byExpiry, sizes string) {
	t := escapeTenant.Replace(tenant)
	return r.prefix + "i1:" + t, r.prefix + "s1:" + t
}

func (r *Redis) counterKey(tenant, key string, window time.Duration) string {
	return r.prefix + "c1:" + escapeTenant.Replace(tenant) + ":" + strconv.FormatInt(window.Milliseconds(), 10) + ":" + key
}

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// An inflater holds tens of KiB of tables: reused, not made per Get.
var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// encode is value as stored: header, ttl, payload.
func encode(value []byte, ttl time.Duration) []byte {
	ms := strconv.FormatInt(ttl.Milliseconds(), 10)
	var buf bytes.Buffer
	buf.Grow(len(value) + len(ms) + 2)
	buf.WriteByte(codecRaw)
	buf.WriteString(ms)
	buf.WriteByte(':')
	if len(value) <= compressAbove {
		buf.Write(value)
		return buf.Bytes()
	}
	head := buf.Len()
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	w.Write(value) // a bytes.Buffer does not fail
	w.Close()
	deflaters.Put(w)
	if buf.Len()-head >= len(value) {
		// Incompressible: keep it as it is.
		buf.Truncate(head)
		buf.Write(value)
		return buf.Bytes()
	}
	buf.Bytes()[0] = codecDeflate
	return buf.Bytes()
}

// decode is the value a stored one holds, no larger than max.
func decode(stored []byte, max int) ([]byte, error) {
	colon := bytes.IndexByte(stored, ':')
	if len(stored) < 2 || colon < 0 {
		return nil, errors.New("not a value in format v1")
	}
	payload := stored[colon+1:]
	switch stored[0] {
	case codecRaw:
		return payload, nil
	case codecDeflate:
		fr := inflaters.Get().(io.ReadCloser)
		defer inflaters.Put(fr)
		fr.(flate.Resetter).Reset(bytes.NewReader(payload), nil)
		value, err := io.ReadAll(io.LimitReader(fr, int64(max)+1))
		if err != nil {
			return nil, fmt.Errorf("a compressed value that does not inflate: %w", err)
		}
		if len(value) > max {
			return nil, fmt.Errorf("a compressed value larger than %d bytes", max)
		}
		return value, nil
	}
	return nil, fmt.Errorf("a value in an unknown format %q", stored[0])
}

// Put is SET with PX; see Store.
func (r *Redis) Put(ctx context.Context, tenant, key string, value []byte, ttl time.Duration) error {
	if len(value) > r.maxValue || ttl <= 0 {
		return ErrTooLarge
	}
	ttl = max(ttl.Round(time.Millisecond), time.Millisecond)
	k := r.valueKey(tenant, key)
	stored := encode(value, ttl)
	if !r.indexed {
		return r.check(ctx, r.client.Set(ctx, k, stored, ttl).Err())
	}
	size := int64(len(stored)+len(key)) + Overhead
	if r.tenantBytes > 0 && size > r.tenantBytes {
		return ErrTooLarge
	}
	byExpiry, sizes := r.indexKeys(tenant)
	err := putIndexedScript.Run(ctx, r.client, []string{k, byExpiry, sizes},
		stored, ttl.Milliseconds(), key, size, r.tenantBytes, r.tenantEntries, r.valueKey(tenant, "")).Err()
	return r.check(ctx, err)
}

// indexLib is what the indexed scripts share: KEYS[1] the value's key,
// KEYS[2] the tenant's keys by expiry (ms), KEYS[3] their sizes ("k:"..key)
// and total ("total"); drop uncharges a key and, when asked, deletes its
// value (whose key is ARGV's value-key prefix .. key); keep makes the
// index live as long as the tenant's last value.
const indexLib = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local byExpiry, sizes = KEYS[2], KEYS[3]
local function drop(member, valueKey)
	local size = tonumber(redis.call('HGET', sizes, 'k:' .. member)) or 0
	redis.call('HDEL', sizes, 'k:' .. member)
	redis.call('ZREM', byExpiry, member)
	redis.call('HINCRBY', sizes, 'total', -size)
	if valueKey then redis.call('DEL', valueKey) end
end
local function keep()
	local last = redis.call('ZRANGE', byExpiry, -1, -1, 'WITHSCORES')[2]
	if last then
		redis.call('PEXPIREAT', byExpiry, last)
		redis.call('PEXPIREAT', sizes, last)
	else
		redis.call('DEL', byExpiry, sizes)
	end
end
`

// putIndexedScript: ARGV stored value, ttl ms, key, size charged, tenant
// bytes and entries (0: none), value-key prefix.
var putIndexedScript = redis.NewScript(indexLib + `
local member, size = ARGV[3], tonumber(ARGV[4])
local maxBytes, maxEntries = tonumber(ARGV[5]), tonumber(ARGV[6])
if maxBytes <= 0 then maxBytes = math.huge end
if maxEntries <= 0 then maxEntries = math.huge end
if redis.call('ZSCORE', byExpiry, member) then drop(member, nil) end
local total = tonumber(redis.call('HGET', sizes, 'total')) or 0
local count = redis.call('ZCARD', byExpiry)
while count > 0 and (total + size > maxBytes or count + 1 > maxEntries) do
	local first = redis.call('ZRANGE', byExpiry, 0, 0)[1]
	drop(first, ARGV[7] .. first)
	total = tonumber(redis.call('HGET', sizes, 'total')) or 0
	count = count - 1
end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', byExpiry, string.format('%d', now + ttl), member)
redis.call('HSET', sizes, 'k:' .. member, size)
redis.call('HINCRBY', sizes, 'total', size)
keep()
return 1
`)

// getScript reads a value and restarts its ttl, taken from the value's
// header, in one step.
var getScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
local colon = string.find(v, ':', 2, true)
local ttl = colon and tonumber(string.sub(v, 2, colon - 1))
if ttl and ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return v
`)

// getIndexedScript: ARGV key. A value the server dropped is uncharged.
var getIndexedScript = redis.NewScript(indexLib + `
local member = ARGV[1]
local v = redis.call('GET', KEYS[1])
if not v then
	if redis.call('ZSCORE', byExpiry, member) then
		drop(member, nil)
		keep()
	end
	return false
end
local colon = string.find(v, ':', 2, true)
local ttl = colon and tonumber(string.sub(v, 2, colon - 1))
if ttl and ttl > 0 then
	redis.call('PEXPIRE', KEYS[1], ttl)
	redis.call('ZADD', byExpiry, 'XX', string.format('%d', now + ttl), member)
	keep()
end
return v
`)

// deleteIndexedScript: ARGV key; returns how many values it deleted.
var deleteIndexedScript = redis.NewScript(indexLib + `
local n = redis.call('DEL', KEYS[1])
if redis.call('ZSCORE', byExpiry, ARGV[1]) then
	drop(ARGV[1], nil)
	keep()
end
return n
`)

// Get reads the value and restarts its ttl in one script; see Store.
func (r *Redis) Get(ctx context.Context, tenant, key string) ([]byte, bool, error) {
	k := r.valueKey(tenant, key)
	var cmd *redis.Cmd
	if r.indexed {
		byExpiry, sizes := r.indexKeys(tenant)
		cmd = getIndexedScript.Run(ctx, r.client, []string{k, byExpiry, sizes}, key)
	} else {
		cmd = getScript.Run(ctx, r.client, []string{k})
	}
	s, err := cmd.Text()
	if err = r.check(ctx, err); errors.Is(err, redis.Nil) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	value, err := decode([]byte(s), r.maxValue)
	if err != nil {
		return nil, false, fmt.Errorf("statestore: redis at %s: %s: %v (written by another version, or not by hookhost)", r.addr, k, err)
	}
	return value, true, nil
}

// Delete is DEL; see Store.
func (r *Redis) Delete(ctx context.Context, tenant, key string) (bool, error) {
	k := r.valueKey(tenant, key)
	var n int64
	var err error
	if r.indexed {
		byExpiry, sizes := r.indexKeys(tenant)
		n, err = deleteIndexedScript.Run(ctx, r.client, []string{k, byExpiry, sizes}, key).Int64()
	} else {
		n, err = r.client.Del(ctx, k).Result()
	}
	if err := r.check(ctx, err); err != nil {
		return false, err
	}
	return n > 0, nil
}

// A counter is a hash of its window's start (s, ms since the epoch by the
// server's clock) and its count (n), expiring when its window ends, so that
// one key serves every window of a (tenant, key, window) and Settle can
// tell whether the window it reserved in is still the current one.
const counterNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// reserveScript: ARGV n, limit, window ms; returns {ok, count, start, now}.
var reserveScript = redis.NewScript(counterNow + `
local n, limit, w = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local start = now - now % w
local cur = redis.call('HMGET', KEYS[1], 's', 'n')
local count = 0
if tonumber(cur[1]) == start then count = tonumber(cur[2]) or 0 end
local ok = 0
if limit <= 0 or count + n <= limit then
	ok = 1
	count = count + n
	redis.call('HSET', KEYS[1], 's', string.format('%d', start), 'n', string.format('%d', count))
	redis.call('PEXPIREAT', KEYS[1], string.format('%d', start + w))
end
return {ok, count, start, now}
`)

// settleScript: ARGV delta, start of the reservation's window, window ms.
var settleScript = redis.NewScript(counterNow + `
local delta, target, w = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local current = now - now % w
if target ~= current then
	if delta <= 0 then return 0 end
	target = current
end
local cur = redis.call('HMGET', KEYS[1], 's', 'n')
local count = 0
if tonumber(cur[1]) == target then
	count = tonumber(cur[2]) or 0
elseif delta <= 0 then
	return 0
end
count = math.max(count + delta, 0)
redis.call('HSET', KEYS[1], 's', string.format('%d', target), 'n', string.format('%d', count))
redis.call('PEXPIREAT', KEYS[1], string.format('%d', target + w))
return 1
`)

// Reserve runs one script on the server, by its clock; see Counter.
func (r *Redis) Reserve(ctx context.Context, tenant, key string, n, limit int64, window time.Duration) (Reservation, error) {
	if window < time.Millisecond {
		return Reservation{}, errWindow
	}
	res := Reservation{Tenant: tenant, Key: key, Window: window}
	k := r.counterKey(tenant, key, window)
	got, err := reserveScript.Run(ctx, r.client, []string{k}, n, limit, window.Milliseconds()).Int64Slice()
	if err := r.check(ctx, err); err != nil {
		return res, err
	}
	if len(got) != 4 {
		return res, fmt.Errorf("statestore: redis at %s: the counter script answered %v", r.addr, got)
	}
	start, now := got[2], got[3]
	res.OK = got[0] == 1
	res.Count = got[1]
	res.Start = time.UnixMilli(start)
	res.RetryAfter = time.Duration(start+window.Milliseconds()-now) * time.Millisecond
	return res, nil
}

// Settle runs one script on the server, by its clock; see Counter.
func (r *Redis) Settle(ctx context.Context, res Reservation, delta int64) error {
	if res.Window < time.Millisecond {
		return errWindow
	}
	k := r.counterKey(res.Tenant, res.Key, res.Window)
	err := settleScript.Run(ctx, r.client, []string{k}, delta, res.Start.UnixMilli(), res.Window.Milliseconds()).Err()
	return r.check(ctx, err)
}
