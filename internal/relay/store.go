package relay

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/upstream"
)

// DefaultStoreMaxBytes is how many bytes of hidden rounds a Store holds at
// most (messages' text and arguments, and their wire forms): 64 MiB. Past
// it, the oldest entries are evicted; a single entry larger than the whole
// cap is not kept at all.
const DefaultStoreMaxBytes = 64 << 20

// entryOverhead is charged per entry and per message on top of their text,
// so that many tiny entries cannot hold more memory than the cap says.
const entryOverhead = 256

// Store keeps rounds hidden from clients, bounded in entries and age.
//
// An entry is made when a response hands tool calls to the client. It is
// keyed by the conversation as the client sent it up to that response and
// by the ids of the calls handed over, in order (upstreams may reuse call
// ids across conversations). It holds the session id plugins saw, the
// messages the client did not see (with their wire forms, for an upstream
// of the client's protocol) and, per handed call, what is needed to fire
// post_tool_call and transform_tool_result once on the result the client
// sends, then the transformed result. A final answer that took hidden
// rounds makes an entry too, keyed by its place in the conversation,
// holding those rounds and the text the client was shown.
//
// Entries live for the store's ttl after their last use, at most entries of
// them, and at most DefaultStoreMaxBytes bytes in all. Each tenant (see
// dialect.Call.Tenant) has its own share: when the store is full, the
// entry that goes is the least recently used one of the tenant holding the
// most (entries, or bytes when the byte cap is what is reached), the
// tenant making room first among equals. So one client's traffic evicts
// its own rounds, never those of a client holding fewer. It is safe for
// concurrent use.
type Store struct {
	ttl      time.Duration
	max      int
	maxBytes int64
	now      func() time.Time
	// shared, when set, holds the entries instead (see NewSharedStore).
	shared statestore.Store

	mu      sync.Mutex
	order   *list.List // of *entry, least recently used first, every tenant
	tenants map[string]*share
	byKey   map[string]*entry
	byCall  map[string]*entry // handed call id → its entry
	bytes   int64
}

// share is what one tenant holds.
type share struct {
	order *list.List // of *entry, least recently used first
	bytes int64
}

// NewStore returns a store of at most entries entries, each kept for ttl.
// entries or ttl <= 0 means a store that keeps nothing.
func NewStore(ttl time.Duration, entries int) *Store {
	return &Store{
		ttl: ttl, max: entries, maxBytes: DefaultStoreMaxBytes, now: time.Now,
		order: list.New(), tenants: map[string]*share{}, byKey: map[string]*entry{}, byCall: map[string]*entry{},
	}
}

// keptMessage is one hidden message and, when the upstream speaks the
// client's protocol, its wire form.
type keptMessage struct {
	Message hooks.Message
	Wire    []json.RawMessage
}

// handedCall is a call given to the client, waiting for its result.
type handedCall struct {
	Name      string
	Arguments json.RawMessage // as the client received them
	// Upstream is the id the upstream gave the call; the client got one
	// minted by hookhost instead.
	Upstream string
	// Once the client's result has been through the hooks: the digest of
	// what the client sent and what the model sees instead.
	Done   bool
	Digest [32]byte
	Result hooks.ToolResult
}

type entry struct {
	key       string
	tenant    string
	sessionID string
	hidden    []keptMessage
	calls     map[string]*handedCall
	shown     string // for a final answer: the text the client was shown
	size      int64
	used      time.Time
	// Where the entry stands in the store's order and in its tenant's.
	all, own *list.Element
}

// convKey identifies a point in a conversation: a chain of digests over
// the messages the client sent before it, started from who is talking
// (see convStart). Upstreams may reuse call ids across conversations (the
// offline model numbers them), so ids alone must never bring one
// conversation's rounds into another's; calls handed to clients get ids
// minted by hookhost for the same reason.
type convKey [32]byte

// convStart is where every conversation of one client protocol, model,
// system prompt and tenant starts, so that two clients sending the same
// messages under different prompts or keys never share an entry.
func convStart(protocol, model, system, tenant string) convKey {
	return convKey{}.chain("conversation", protocol, model, system, tenant)
}

// chain returns the digest of k followed by fields, each length-prefixed
// so that no two different sequences write the same bytes.
func (k convKey) chain(fields ...string) convKey {
	h := sha256.New()
	h.Write(k[:])
	for _, s := range fields {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var n convKey
	h.Sum(n[:0])
	return n
}

// next returns the key after m: a hash of k and of m's every field, so
// that no two different conversations share a key.
// h is reused from one message to the next.
func (k convKey) next(h hash.Hash, m hooks.Message) convKey {
	h.Reset()
	h.Write(k[:])
	upstream.HashMessage(h, m)
	var n convKey
	h.Sum(n[:0])
	return n
}

// roundsKey identifies an assistant message by where it stands in the
// conversation and the ids of its tool calls.
func roundsKey(at convKey, calls []hooks.ToolCall) string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	return string(at[:]) + strings.Join(ids, "\x00")
}

// finalKey identifies a final answer by where it stands in the
// conversation.
func finalKey(at convKey) string { return string(at[:]) + "\x02" }

// callKey identifies one call handed to a client by the assistant message
// that carried it.
func callKey(at convKey, id string) string { return string(at[:]) + "\x01" + id }

func resultDigest(content string, isError bool) [32]byte {
	return sha256.Sum256([]byte(strconv.FormatBool(isError) + "\x00" + content))
}

func (e *entry) measure() int64 {
	n := int64(entryOverhead + len(e.key) + len(e.sessionID) + len(e.shown))
	for _, m := range e.hidden {
		n += entryOverhead + int64(len(m.Message.Content)+len(m.Message.ToolCallID)+len(m.Message.ToolName))
		for _, c := range m.Message.ToolCalls {
			n += int64(len(c.ID) + len(c.Name) + len(c.Arguments))
		}
		for _, w := range m.Wire {
			n += int64(len(w))
		}
	}
	for id, c := range e.calls {
		n += entryOverhead + int64(len(id)+len(c.Name)+len(c.Arguments)+len(c.Upstream)+len(c.Result.Content))
	}
	return n
}

// put keeps e, evicting the oldest entries as the bounds require. It
// returns how many entries it evicted and whether e was kept.
func (s *Store) put(e *entry) (evicted int, kept bool) {
	if s == nil || s.max <= 0 || s.ttl <= 0 {
		return 0, false
	}
	e.size = e.measure()
	if e.size > s.maxBytes {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e.used = now
	evicted = s.expireLocked(now)
	if old, ok := s.byKey[e.key]; ok {
		s.removeLocked(old)
	}
	for s.order.Len() >= s.max || s.bytes+e.size > s.maxBytes {
		s.removeLocked(s.victimLocked(e.tenant, s.order.Len() >= s.max))
		evicted++
	}
	sh := s.tenants[e.tenant]
	if sh == nil {
		sh = &share{order: list.New()}
		s.tenants[e.tenant] = sh
	}
	e.all, e.own = s.order.PushBack(e), sh.order.PushBack(e)
	sh.bytes += e.size
	s.byKey[e.key] = e
	for id := range e.calls {
		s.byCall[id] = e
	}
	s.bytes += e.size
	return evicted, true
}

// victimLocked is the entry to evict to make room for one of tenant: the
// least recently used of the tenant holding the most entries (byCount) or
// bytes, tenant itself when it holds as much as any other.
func (s *Store) victimLocked(tenant string, byCount bool) *entry {
	size := func(sh *share) int64 {
		if byCount {
			return int64(sh.order.Len())
		}
		return sh.bytes
	}
	var most *share
	if own := s.tenants[tenant]; own != nil && own.order.Len() > 0 {
		most = own
	}
	for _, sh := range s.tenants {
		if most == nil || size(sh) > size(most) {
			most = sh
		}
	}
	return most.order.Front().Value.(*entry)
}

// expireLocked drops entries unused for longer than the ttl.
func (s *Store) expireLocked(now time.Time) int {
	n := 0
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		e := el.Value.(*entry)
		if now.Sub(e.used) <= s.ttl {
			break
		}
		s.removeLocked(e)
		n++
	}
	return n
}

func (s *Store) removeLocked(e *entry) {
	s.order.Remove(e.all)
	if sh := s.tenants[e.tenant]; sh != nil {
		sh.order.Remove(e.own)
		sh.bytes -= e.size
		if sh.order.Len() == 0 {
			delete(s.tenants, e.tenant)
		}
	}
	if s.byKey[e.key] == e {
		delete(s.byKey, e.key)
	}
	for id := range e.calls {
		if s.byCall[id] == e {
			delete(s.byCall, id)
		}
	}
	s.bytes -= e.size
}

// touchLocked marks e as just used, or drops it when it has expired.
func (s *Store) touchLocked(e *entry) bool {
	now := s.now()
	if now.Sub(e.used) > s.ttl {
		s.removeLocked(e)
		return false
	}
	e.used = now
	s.order.MoveToBack(e.all)
	if sh := s.tenants[e.tenant]; sh != nil {
		sh.order.MoveToBack(e.own)
	}
	return true
}

// rounds returns the session id and hidden messages kept for an assistant
// message whose tool calls have exactly these ids, in this order.
func (s *Store) rounds(key string) (sessionID string, hidden []keptMessage, ok bool) {
	if s == nil {
		return "", nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byKey[key]
	if !found || !s.touchLocked(e) {
		return "", nil, false
	}
	return e.sessionID, e.hidden, true
}

// final returns what is kept for the final answer at key: the session
// id, the rounds up to and including the answer, and the text the client
// was shown.
func (s *Store) final(key string) (sessionID string, hidden []keptMessage, shown string, ok bool) {
	if s == nil {
		return "", nil, "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byKey[key]
	if !found || !s.touchLocked(e) {
		return "", nil, "", false
	}
	return e.sessionID, e.hidden, e.shown, true
}

// handed returns a copy of what is kept about the call id handed to a
// client, and the session it belongs to.
func (s *Store) handed(id string) (sessionID string, c handedCall, ok bool) {
	if s == nil {
		return "", handedCall{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byCall[id]
	if !found || !s.touchLocked(e) {
		return "", handedCall{}, false
	}
	return e.sessionID, *e.calls[id], true
}

// answered records the result the model sees for the handed call id, given
// the digest of what the client sent.
func (s *Store) answered(id string, digest [32]byte, res hooks.ToolResult) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byCall[id]
	if !found {
		return
	}
	c := e.calls[id]
	grow := int64(len(res.Content) - len(c.Result.Content))
	if s.bytes+grow > s.maxBytes {
		// Without the transformed result a later request fires the hooks
		// again; that beats holding more than the cap.
		return
	}
	c.Done, c.Digest, c.Result = true, digest, res
	e.size += grow
	s.bytes += grow
	if sh := s.tenants[e.tenant]; sh != nil {
		sh.bytes += grow
	}
}

// Len returns how many entries the store holds in memory (0 for a shared
// store, whose entries are the backend's).
func (s *Store) Len() int {
	if s == nil || s.shared != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
