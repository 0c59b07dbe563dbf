package relay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hooks"
)

// NewSharedStore returns a store that keeps its entries in st, each for
// ttl after its last use, so that every replica of hookhost serve using
// the same backend continues the conversations of the others: a
// continuation landing on another replica gets its hidden rounds spliced
// back as on the one that kept them. Bounds (a value's size, each
// tenant's entries and bytes) and compression are st's.
//
// Unlike the memory store, a shared one can fail: a lookup that fails is
// the request's failure (the client gets the backend's error, a 503 when
// st's errors are *dialect.Error, and can retry), never a continuation
// that silently goes upstream without its hidden rounds; a response whose
// rounds cannot be kept fails the same way before it hands its calls to
// the client. ttl <= 0 means a store that keeps nothing.
func NewSharedStore(st statestore.Store, ttl time.Duration) *Store {
	s := NewStore(ttl, 1)
	s.shared = st
	return s
}

// The keys of a shared store's values: a format version, what the value
// is (an entry, or one call handed to the client) and a digest of the
// key the memory store uses (binary, and long with many call ids). A
// change of what is stored under them changes the version, so that
// replicas of two versions never read each other's values.
const (
	sharedEntryPrefix = "rounds1:e:"
	sharedCallPrefix  = "rounds1:c:"
)

func sharedKey(prefix, key string) string {
	sum := sha256.Sum256([]byte(key))
	return prefix + hex.EncodeToString(sum[:])
}

// sharedEntry is an entry as a shared store keeps it; its handed calls
// are kept apart (sharedCall), so that recording a call's result writes
// that call alone. gob, unlike JSON, keeps text and arguments byte for
// byte, invalid UTF-8 and invalid JSON included.
type sharedEntry struct {
	SessionID string
	Hidden    []keptMessage
	Shown     string
}

type sharedCall struct {
	SessionID string
	Call      handedCall
}

func encodeShared(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// prefetched holds values of a shared store read ahead, by their keys in
// the backend: a continuation's lookups, one per assistant message and per
// result for a handed call, go to the backend at once rather than one
// round trip after the other.
type prefetched map[string]fetched

type fetched struct {
	data []byte
	ok   bool
}

// prefetchParallel bounds the reads one request has in flight.
const prefetchParallel = 8

// prefetch reads ahead what the lookups of entries and calls (keys as
// rounds, final and handed take them) will ask for; nil for a memory
// store, or when there is at most one.
func (s *Store) prefetch(ctx context.Context, tenant string, entries, calls []string) (prefetched, error) {
	if s == nil || s.shared == nil || len(entries)+len(calls) < 2 {
		return nil, nil
	}
	keys := make([]string, 0, len(entries)+len(calls))
	for _, k := range entries {
		keys = append(keys, sharedKey(sharedEntryPrefix, k))
	}
	for _, k := range calls {
		keys = append(keys, sharedKey(sharedCallPrefix, k))
	}
	var (
		out      = make(prefetched, len(keys))
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		slots    = make(chan struct{}, prefetchParallel)
	)
	for _, k := range keys {
		mu.Lock()
		_, seen := out[k]
		if !seen {
			out[k] = fetched{} // claimed: the read below fills it in
		}
		mu.Unlock()
		if seen {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			data, ok, err := s.shared.Get(ctx, tenant, k)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			out[k] = fetched{data: data, ok: ok}
		}()
	}
	wg.Wait()
	return out, firstErr
}

// getShared reads key into v, from pre when it was read ahead; a value
// that does not decode (written by a replica of another version under the
// same key) is a miss.
func (s *Store) getShared(ctx context.Context, pre prefetched, tenant, key string, v any) (bool, error) {
	f, ahead := pre[key]
	if !ahead {
		var err error
		if f.data, f.ok, err = s.shared.Get(ctx, tenant, key); err != nil {
			return false, err
		}
	}
	data, ok := f.data, f.ok
	if !ok {
		return false, nil
	}
	if gob.NewDecoder(bytes.NewReader(data)).Decode(v) != nil {
		return false, nil
	}
	return true, nil
}

func (s *Store) putShared(ctx context.Context, tenant, key string, v any) (kept bool, err error) {
	data, err := encodeShared(v)
	if err != nil {
		return false, nil
	}
	err = s.shared.Put(ctx, tenant, key, data, s.ttl)
	if errors.Is(err, statestore.ErrTooLarge) {
		return false, nil
	}
	return err == nil, err
}

// keepEntry keeps e; it returns how many entries were evicted to make room
// (memory only) and whether e was kept. Its error is the shared backend's.
func (s *Store) keepEntry(ctx context.Context, e *entry) (evicted int, kept bool, err error) {
	if s == nil || s.shared == nil {
		evicted, kept = s.put(e)
		return evicted, kept, nil
	}
	if s.ttl <= 0 {
		return 0, false, nil
	}
	// The calls first: an entry found means its calls were kept.
	for key, c := range e.calls {
		if kept, err := s.putShared(ctx, e.tenant, sharedKey(sharedCallPrefix, key), sharedCall{SessionID: e.sessionID, Call: *c}); !kept {
			return 0, false, err
		}
	}
	kept, err = s.putShared(ctx, e.tenant, sharedKey(sharedEntryPrefix, e.key),
		sharedEntry{SessionID: e.sessionID, Hidden: e.hidden, Shown: e.shown})
	return 0, kept, err
}

// lookupRounds is rounds, from whichever store s is; tenant is the
// request's.
func (s *Store) lookupRounds(ctx context.Context, pre prefetched, tenant, key string) (sessionID string, hidden []keptMessage, ok bool, err error) {
	if s == nil || s.shared == nil {
		sessionID, hidden, ok = s.rounds(key)
		return sessionID, hidden, ok, nil
	}
	var e sharedEntry
	ok, err = s.getShared(ctx, pre, tenant, sharedKey(sharedEntryPrefix, key), &e)
	return e.SessionID, e.Hidden, ok, err
}

// lookupFinal is final, from whichever store s is.
func (s *Store) lookupFinal(ctx context.Context, pre prefetched, tenant, key string) (sessionID string, hidden []keptMessage, shown string, ok bool, err error) {
	if s == nil || s.shared == nil {
		sessionID, hidden, shown, ok = s.final(key)
		return sessionID, hidden, shown, ok, nil
	}
	var e sharedEntry
	ok, err = s.getShared(ctx, pre, tenant, sharedKey(sharedEntryPrefix, key), &e)
	return e.SessionID, e.Hidden, e.Shown, ok, err
}

// lookupHanded is handed, from whichever store s is.
func (s *Store) lookupHanded(ctx context.Context, pre prefetched, tenant, key string) (sessionID string, c handedCall, ok bool, err error) {
	if s == nil || s.shared == nil {
		sessionID, c, ok = s.handed(key)
		return sessionID, c, ok, nil
	}
	var sc sharedCall
	ok, err = s.getShared(ctx, pre, tenant, sharedKey(sharedCallPrefix, key), &sc)
	return sc.SessionID, sc.Call, ok, err
}

// record is answered, in whichever store s is: c is the call as looked up,
// in session sessionID. What pre read ahead of the call is dropped, so
// that a later lookup sees the record.
func (s *Store) record(ctx context.Context, pre prefetched, tenant, key, sessionID string, c handedCall, digest [32]byte, res hooks.ToolResult) error {
	if s == nil || s.shared == nil {
		s.answered(key, digest, res)
		return nil
	}
	delete(pre, sharedKey(sharedCallPrefix, key))
	c.Done, c.Digest, c.Result = true, digest, res
	_, err := s.putShared(ctx, tenant, sharedKey(sharedCallPrefix, key), sharedCall{SessionID: sessionID, Call: c})
	return err
}
