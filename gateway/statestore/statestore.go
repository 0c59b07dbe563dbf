// Package statestore keeps what the gateway holds for its clients between
// requests (the Responses objects hookhost stored, so that
// previous_response_id and item_reference resolve; the hidden rounds of
// mixed tool calls) as opaque bytes under a tenant and a key, bounded and
// expiring, and counts what rate limits count.
//
// The contract is two small interfaces, small on purpose: every operation
// in them is one atomic command of a shared backend (Redis or Valkey: SET
// with PX, a GET that restarts the ttl, DEL, a script that checks and adds
// to a counter), so several replicas of hookhost serve can use one backend
// and a conversation continues, and a budget holds, on whichever replica a
// request lands. Anything richer (listing, scanning, transactions across
// keys) would not be atomic across replicas, or would cost a round trip
// more per request; callers build on Put, Get, Delete, Reserve and Settle.
//
//   - Store keeps values per tenant with a ttl restarted on each use.
//   - Counter counts per tenant and key over fixed windows of time,
//     refusing what would pass a limit: requests per minute (Reserve 1)
//     and tokens per minute (Reserve an estimate when a request starts,
//     Settle the difference from its real usage when it ends).
//
// Memory is the default, in one process. Redis is the shared backend.
// Both pass the suite in statestoretest.
package statestore

import (
	"context"
	"errors"
	"time"
)

// Store keeps values per tenant. Keys of one tenant are never visible to
// another: the same key under two tenants is two values.
//
// Implementations are safe for concurrent use. Errors are the backend's
// own failures (a shared store that cannot be reached); a missing or
// expired key is not an error.
type Store interface {
	// Put keeps value under (tenant, key) until ttl has passed since it
	// was last put or got, replacing what was there. It returns
	// ErrTooLarge, keeping nothing, when value alone is larger than the
	// store may hold for one tenant.
	Put(ctx context.Context, tenant, key string, value []byte, ttl time.Duration) error
	// Get returns the value under (tenant, key) and restarts its ttl; ok
	// is false when there is none (never put, deleted, expired or
	// evicted).
	Get(ctx context.Context, tenant, key string) (value []byte, ok bool, err error)
	// Delete removes (tenant, key) and reports whether it was there.
	Delete(ctx context.Context, tenant, key string) (bool, error)
}

// ErrTooLarge is returned by Put for a value the store would never hold.
var ErrTooLarge = errors.New("statestore: the value is larger than the store holds for one tenant")

// Counter counts per (tenant, key, window) over fixed windows of time:
// windows of one length follow each other from the Unix epoch, by the
// backend's clock (Redis: the server's, so that replicas whose clocks
// differ still share one window). A counter of one tenant is never seen by
// another; counters and Store values never collide.
//
// Reserve checks and adds in one atomic step, so that N replicas sharing a
// backend admit no more than limit between them: with limits on requests,
// exactly; on tokens, within what Settle adds past the estimates.
//
// Implementations are safe for concurrent use. Errors are the backend's
// own failures.
type Counter interface {
	// Reserve adds n to the count of the current window of
	// (tenant, key, window) when the count stays within limit after it
	// (limit <= 0: no limit), and reports the count either way: with n
	// when OK, without it when refused. An n larger than limit is never
	// admitted, so callers cap estimates at the limit. n = 0 reads the
	// count.
	Reserve(ctx context.Context, tenant, key string, n, limit int64, window time.Duration) (Reservation, error)
	// Settle adds delta, which may be negative (an estimate larger than
	// the usage), to the count r was reserved in, whether or not r was
	// admitted and whatever the limit: usage happened. When r's window
	// has ended, a positive delta counts in the current window and a
	// negative one is dropped; a count never goes below 0.
	Settle(ctx context.Context, r Reservation, delta int64) error
}

// Reservation is what Reserve did and what Settle needs to correct it.
type Reservation struct {
	Tenant, Key string
	Window      time.Duration
	// Start is when the window counted in began, by the backend's clock.
	Start time.Time
	// OK is whether n was added; Count is the window's count after
	// Reserve.
	OK    bool
	Count int64
	// RetryAfter is how long until the window ends, by the backend's
	// clock: when a refused request may try again.
	RetryAfter time.Duration
}

// windowStart is the start of the fixed window of length w that t falls
// in: windows follow each other from the Unix epoch.
func windowStart(t time.Time, w time.Duration) time.Time {
	ms := t.UnixMilli()
	wms := w.Milliseconds()
	return time.UnixMilli(ms - ms%wms)
}

// errWindow is returned for a window shorter than the millisecond in
// which backends count.
var errWindow = errors.New("statestore: a counter's window must be at least 1ms")
