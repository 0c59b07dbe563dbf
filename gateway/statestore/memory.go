package statestore

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Limits bound a Memory store. Every value is charged its length, its
// key's and Overhead.
type Limits struct {
	// Entries and Bytes bound the whole store.
	Entries int
	Bytes   int64
	// TenantEntries and TenantBytes bound what one tenant holds; 0 means
	// the whole store's bound. A value larger than TenantBytes is never
	// kept (ErrTooLarge).
	TenantEntries int
	TenantBytes   int64
}

// Overhead is what each value is charged on top of its bytes and its key's,
// so that many tiny values cannot hold more memory than the bounds say.
const Overhead = 256

// Memory is the in-process Store. Each tenant's values are kept in the
// order of their last use. When a Put would pass a tenant's own bound, that
// tenant's least recently used values go first. When it would pass the
// whole store's bound, expired values go first, then the least recently
// used value of the tenant holding the most (bytes, or values when the
// count is what is over): so a tenant that floods the store evicts its own
// values, and a tenant holding less than its fair share (the store divided
// by the tenants using it) loses nothing to it.
type Memory struct {
	lim Limits
	now func() time.Time

	mu      sync.Mutex
	tenants map[string]*shelf
	entries int
	bytes   int64
	evicted int64

	counters  map[counterKey]*count
	sweepSize int // sweep ended windows when counters reaches this size
}

var (
	_ Store   = (*Memory)(nil)
	_ Counter = (*Memory)(nil)
)

// shelf is one tenant's values, least recently used first.
type shelf struct {
	order *list.List // of *value
	byKey map[string]*list.Element
	bytes int64
}

type value struct {
	key  string
	data []byte
	size int64
	ttl  time.Duration
	used time.Time
}

// NewMemory returns an empty store with the given bounds; now is its clock
// (nil: time.Now), injectable so that expiry can be tested without waiting.
// Limits of 0 entries or bytes make a store that keeps nothing.
func NewMemory(lim Limits, now func() time.Time) *Memory {
	if lim.TenantEntries <= 0 || lim.TenantEntries > lim.Entries {
		lim.TenantEntries = lim.Entries
	}
	if lim.TenantBytes <= 0 || lim.TenantBytes > lim.Bytes {
		lim.TenantBytes = lim.Bytes
	}
	if now == nil {
		now = time.Now
	}
	return &Memory{lim: lim, now: now, tenants: map[string]*shelf{}, counters: map[counterKey]*count{}, sweepSize: minSweep}
}

func (v *value) expired(now time.Time) bool { return now.Sub(v.used) > v.ttl }

// Put keeps a copy of data; see Store.
func (m *Memory) Put(_ context.Context, tenant, key string, data []byte, ttl time.Duration) error {
	size := int64(len(data)+len(key)) + Overhead
	if size > m.lim.TenantBytes || m.lim.TenantEntries <= 0 || ttl <= 0 {
		return ErrTooLarge
	}
	v := &value{key: key, data: append([]byte(nil), data...), size: size, ttl: ttl}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	v.used = now
	sh := m.tenants[tenant]
	if sh == nil {
		sh = &shelf{order: list.New(), byKey: map[string]*list.Element{}}
		m.tenants[tenant] = sh
	}
	if el, ok := sh.byKey[key]; ok {
		m.removeLocked(tenant, sh, el)
	}
	m.expireLocked(tenant, sh, now)
	for sh.order.Len()+1 > m.lim.TenantEntries || sh.bytes+size > m.lim.TenantBytes {
		m.removeLocked(tenant, sh, sh.order.Front())
		m.evicted++
	}
	if m.entries+1 > m.lim.Entries || m.bytes+size > m.lim.Bytes {
		for t, s := range m.tenants {
			m.expireLocked(t, s, now)
		}
	}
	for m.entries+1 > m.lim.Entries || m.bytes+size > m.lim.Bytes {
		t, s := m.heaviestLocked(m.bytes+size > m.lim.Bytes)
		m.removeLocked(t, s, s.order.Front())
		m.evicted++
	}
	if m.tenants[tenant] == nil {
		// Emptied above; it holds the new value now.
		m.tenants[tenant] = sh
	}
	sh.byKey[key] = sh.order.PushBack(v)
	sh.bytes += size
	m.entries++
	m.bytes += size
	return nil
}

// heaviestLocked is the tenant holding the most bytes (byBytes) or the most
// values. Ties go to either; the store is not empty when it is called.
func (m *Memory) heaviestLocked(byBytes bool) (string, *shelf) {
	var (
		name string
		best *shelf
	)
	for t, s := range m.tenants {
		if s.order.Len() == 0 {
			continue
		}
		if best == nil || (byBytes && s.bytes > best.bytes) || (!byBytes && s.order.Len() > best.order.Len()) {
			name, best = t, s
		}
	}
	return name, best
}

// expireLocked drops the tenant's values unused for longer than their ttl,
// oldest first, up to the first one still alive.
func (m *Memory) expireLocked(tenant string, sh *shelf, now time.Time) {
	for el := sh.order.Front(); el != nil; el = sh.order.Front() {
		if !el.Value.(*value).expired(now) {
			return
		}
		m.removeLocked(tenant, sh, el)
	}
}

func (m *Memory) removeLocked(tenant string, sh *shelf, el *list.Element) {
	v := el.Value.(*value)
	sh.order.Remove(el)
	delete(sh.byKey, v.key)
	sh.bytes -= v.size
	m.entries--
	m.bytes -= v.size
	if sh.order.Len() == 0 {
		// Tenants holding nothing cost nothing, however many come by.
		delete(m.tenants, tenant)
	}
}

// Get returns the value as kept, which callers must not modify; see Store.
func (m *Memory) Get(_ context.Context, tenant, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sh := m.tenants[tenant]
	if sh == nil {
		return nil, false, nil
	}
	el, ok := sh.byKey[key]
	if !ok {
		return nil, false, nil
	}
	v := el.Value.(*value)
	now := m.now()
	if v.expired(now) {
		m.removeLocked(tenant, sh, el)
		return nil, false, nil
	}
	v.used = now
	sh.order.MoveToBack(el)
	return v.data, true, nil
}

// Delete removes the value; see Store.
func (m *Memory) Delete(_ context.Context, tenant, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sh := m.tenants[tenant]
	if sh == nil {
		return false, nil
	}
	el, ok := sh.byKey[key]
	if !ok {
		return false, nil
	}
	m.removeLocked(tenant, sh, el)
	return true, nil
}

// Usage reports what the store holds: values, bytes charged, and how many
// values it has evicted to stay within its bounds (expired ones aside).
func (m *Memory) Usage() (entries int, bytes, evicted int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.entries, m.bytes, m.evicted
}

type counterKey struct {
	tenant, key string
	window      time.Duration
}

type count struct {
	start time.Time
	n     int64
}

// minSweep is the fewest counters at which Reserve looks for ended windows
// to drop; it then waits for the map to double, so that dropping them
// costs O(1) per Reserve however many keys come by.
const minSweep = 1024

// Reserve counts by the store's clock; see Counter.
func (m *Memory) Reserve(_ context.Context, tenant, key string, n, limit int64, window time.Duration) (Reservation, error) {
	if window < time.Millisecond {
		return Reservation{}, errWindow
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	start := windowStart(now, window)
	ck := counterKey{tenant, key, window}
	c := m.counters[ck]
	if c == nil || !c.start.Equal(start) {
		if c == nil {
			m.sweepLocked(now)
		}
		c = &count{start: start}
	}
	r := Reservation{Tenant: tenant, Key: key, Window: window, Start: start, RetryAfter: start.Add(window).Sub(now)}
	if limit <= 0 || c.n+n <= limit {
		c.n += n
		r.OK = true
		m.counters[ck] = c
	}
	r.Count = c.n
	return r, nil
}

// Settle corrects a reservation; see Counter.
func (m *Memory) Settle(_ context.Context, r Reservation, delta int64) error {
	if r.Window < time.Millisecond {
		return errWindow
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	current := windowStart(now, r.Window)
	target := r.Start
	if !target.Equal(current) {
		if delta <= 0 {
			return nil
		}
		target = current
	}
	ck := counterKey{r.Tenant, r.Key, r.Window}
	c := m.counters[ck]
	if c == nil || !c.start.Equal(target) {
		if delta <= 0 {
			return nil
		}
		if c == nil {
			m.sweepLocked(now)
		}
		c = &count{start: target}
		m.counters[ck] = c
	}
	c.n = max(c.n+delta, 0)
	return nil
}

// sweepLocked drops the counters of ended windows once there are enough of
// them to be worth a pass.
func (m *Memory) sweepLocked(now time.Time) {
	if len(m.counters) < m.sweepSize {
		return
	}
	for ck, c := range m.counters {
		if !c.start.Add(ck.window).After(now) {
			delete(m.counters, ck)
		}
	}
	m.sweepSize = max(minSweep, 2*len(m.counters))
}
