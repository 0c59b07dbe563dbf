// Package statestore keeps what the gateway holds for its clients between
// requests (today: the Responses objects hookhost stored, so that
// previous_response_id and item_reference resolve), as opaque bytes under a
// tenant and a key, bounded and expiring.
//
// Store is the whole contract, small on purpose: a backend shared by
// several replicas (Redis: SET with EX, GETEX, DEL, keys prefixed by
// tenant) can implement it, and the gateway then continues a conversation
// on whichever replica a request lands. Memory is the default, in one
// process.
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
