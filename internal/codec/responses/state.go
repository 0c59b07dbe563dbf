package responses

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/internal/dialect"
)

// States are the Responses objects hookhost stored for its clients, so that
// a request naming one by previous_response_id, or one of its items by an
// item_reference, continues from it on any upstream.
//
// A stored response holds the object the client got (output items with the
// ids hookhost gave them) and the whole input it answered, resolved: the
// earlier responses' input and output it continued from, then the request's
// own items. Continuing from it sends all of that upstream ahead of the new
// request's items, so the neutral history is the one a client sending the
// whole conversation would have sent, and the relay splices back the rounds
// it hid from the client in the same way.
//
// Keys are per tenant (dialect.Call.Tenant): "resp:<id>" holds the record,
// "item:<id>" each output item. Values live for TTL after their last use,
// within the Store's bounds.
type States struct {
	// Store keeps the records; nil keeps nothing (every id of hookhost's
	// is then unknown).
	Store statestore.Store
	// TTL is how long a stored response lives after its last use.
	TTL time.Duration
}

// record is what is stored per response.
type record struct {
	// Response is the Response object as the client got it.
	Response json.RawMessage `json:"response"`
	// Input is the whole input it answered, resolved, as sent upstream.
	Input []json.RawMessage `json:"input"`
	// Upstream is the previous_response_id the upstream itself issued
	// that this response continued (a Responses upstream's own state),
	// which a continuation must name again.
	Upstream string `json:"upstream_previous,omitempty"`
}

// --- ids ----------------------------------------------------------------

// idTagLen is the length of the tag that marks an id as hookhost's, in hex
// digits.
const idTagLen = 16

// mintID returns an id for a response or an output item: prefix ("resp_",
// "msg_", "fc_"), 128 random bits, then a tag derived from them, all in hex.
// The tag lets any replica tell hookhost's ids from an upstream's without
// asking the store: an id of hookhost's that the store does not hold has
// expired, was deleted or lives on another replica, and is never sent
// upstream, where it would mean nothing.
func mintID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	body := prefix + hex.EncodeToString(b[:])
	return body + idTag(body)
}

func idTag(body string) string {
	sum := sha256.Sum256([]byte("hookhost responses id\x00" + body))
	return hex.EncodeToString(sum[:idTagLen/2])
}

// Minted reports whether id is one hookhost gave a response or an output
// item (see mintID). A client can forge one, which gets it only a 404.
func Minted(id string) bool {
	i := strings.IndexByte(id, '_')
	if i < 0 || len(id)-i-1 != 32+idTagLen {
		return false
	}
	body := id[:len(id)-idTagLen]
	return idTag(body) == id[len(id)-idTagLen:]
}

// --- resolving a request -----------------------------------------------

// Turn is one request's part in the stored state: what it continued and
// what to keep once it is answered. Bind it to the decoded call: the
// response is then stored as Encode or the stream's final event produce
// it, before the client can read it, and Err says whether that failed.
type Turn struct {
	s      *States
	tenant string
	// keep: store:true (the default); nothing is kept otherwise.
	keep bool
	// previous is the client's previous_response_id, as sent, for the
	// Response object to echo.
	previous json.RawMessage
	// upstream is the previous_response_id the upstream gets (its own id).
	upstream string
	// input is the whole resolved input, kept for the record.
	input []json.RawMessage
	// ctx is the request's, without its cancellation: a response sent is
	// kept even when its client leaves at once.
	ctx context.Context
	// kept is set once the Response object sent was offered to the
	// store; err says why it was not kept.
	kept bool
	err  error
}

// notFound is OpenAI's 404 for a previous_response_id it does not hold.
func previousNotFound(id string) *dialect.Error {
	return &dialect.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "previous_response_id",
		Code: "previous_response_not_found", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
}

// itemNotFound is OpenAI's 404 for an item_reference it does not hold.
func itemNotFound(param, id string) *dialect.Error {
	return &dialect.Error{Status: http.StatusNotFound, Type: "invalid_request_error", Param: param,
		Message: fmt.Sprintf("Item with id '%s' not found.", id)}
}

// storeFailed is the error for a Store that failed (a shared backend that
// cannot be reached): the conversation cannot go on without it. A Store
// whose errors are already 503s saying why (naming the backend) has them
// sent as they are.
func storeFailed(err error) *dialect.Error {
	if e := (*dialect.Error)(nil); errors.As(err, &e) && e.Status == http.StatusServiceUnavailable {
		return e
	}
	return &dialect.Error{Status: http.StatusServiceUnavailable, Type: "api_error",
		Message: "hookhost could not reach its store of responses (a server error, logged on the server); retry shortly: " + err.Error()}
}

// peek is what Resolve reads of an input item.
type peek struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
}

// Resolve rewrites a request body so that it carries what it refers to:
// the stored input and output of the response named by
// previous_response_id ahead of its own input, and in place of each
// item_reference the item it names. Ids hookhost minted are taken out of
// the items sent on, so that none reaches the upstream. own says that the
// upstream speaks Responses itself (forward mode): a previous_response_id
// or an item_reference that is not hookhost's is then the upstream's own
// and passes through unchanged; on any other upstream, and for an id of
// hookhost's that is not stored (expired, deleted, kept by another replica
// or another tenant), the request is refused with OpenAI's 404, never
// answered without the context it asked for.
//
// A body with nothing to resolve comes back as it came. A body that is not
// a valid request is left for Decode to refuse.
func (s *States) Resolve(ctx context.Context, tenant string, body []byte, own bool) ([]byte, *Turn, error) {
	t := &Turn{s: s, tenant: tenant, keep: true, ctx: context.WithoutCancel(ctx)}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return body, t, nil
	}
	if v, ok := top["store"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &t.keep); err != nil {
			return nil, nil, dialect.Invalid("store", "store must be true or false")
		}
	}
	changed := false
	var items []json.RawMessage
	if v, ok := top["previous_response_id"]; ok && !isNull(v) {
		var id string
		if err := json.Unmarshal(v, &id); err != nil || id == "" {
			return nil, nil, dialect.Invalid("previous_response_id", "previous_response_id must be the id of a response, a non-empty string")
		}
		t.previous = v
		rec, found, err := s.get(ctx, tenant, id)
		switch {
		case err != nil:
			return nil, nil, storeFailed(err)
		case found:
			items = append(items, rec.Input...)
			var obj struct {
				Output []json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(rec.Response, &obj); err != nil {
				return nil, nil, storeFailed(fmt.Errorf("stored response %s is not a Response object: %w", id, err))
			}
			for _, it := range obj.Output {
				items = append(items, strip(it))
			}
			delete(top, "previous_response_id")
			if rec.Upstream != "" {
				t.upstream = rec.Upstream
				top["previous_response_id"] = mustJSON(rec.Upstream)
			}
			changed = true
		case own && !Minted(id):
			t.upstream = id
		default:
			return nil, nil, previousNotFound(id)
		}
	}
	var mine []json.RawMessage
	var text string
	switch v, ok := top["input"]; {
	case !ok || isNull(v):
		if !changed {
			// Decode says input is required.
			return body, t, nil
		}
	case json.Unmarshal(v, &text) == nil:
		mine = []json.RawMessage{mustJSON(map[string]string{"role": "user", "content": text})}
		if !changed && !t.keep {
			return body, t, nil
		}
	case json.Unmarshal(v, &mine) != nil:
		return body, t, nil
	}
	for i, raw := range mine {
		var p peek
		if json.Unmarshal(raw, &p) != nil {
			// Decode says what is wrong with it.
			items = append(items, raw)
			continue
		}
		if p.Type == "item_reference" {
			param := fmt.Sprintf("input[%d]", i)
			if p.ID == nil || *p.ID == "" {
				return nil, nil, dialect.Invalid(param+".id", param+" (item_reference) needs the id of an item")
			}
			it, found, err := s.item(ctx, tenant, *p.ID)
			switch {
			case err != nil:
				return nil, nil, storeFailed(err)
			case found:
				items = append(items, strip(it))
				changed = true
			case own && !Minted(*p.ID):
				items = append(items, raw)
			default:
				return nil, nil, itemNotFound(param, *p.ID)
			}
			continue
		}
		if p.ID != nil && Minted(*p.ID) {
			raw = strip(raw)
			changed = true
		}
		items = append(items, raw)
	}
	if t.keep {
		t.input = items
	}
	if !changed {
		return body, t, nil
	}
	top["input"] = mustJSON(items)
	out, err := json.Marshal(top)
	if err != nil {
		return nil, nil, dialect.Invalid("input", "the request cannot be re-encoded with the items it refers to: "+err.Error())
	}
	return out, t, nil
}

// strip returns item without its id when hookhost minted that id: the
// upstream never issued it. Other items come back as they came.
func strip(item json.RawMessage) json.RawMessage {
	var p peek
	if json.Unmarshal(item, &p) != nil || p.ID == nil || !Minted(*p.ID) {
		return item
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(item, &obj) != nil {
		return item
	}
	delete(obj, "id")
	return mustJSON(obj)
}

func (s *States) get(ctx context.Context, tenant, id string) (*record, bool, error) {
	if s == nil || s.Store == nil {
		return nil, false, nil
	}
	b, ok, err := s.Store.Get(ctx, tenant, "resp:"+id)
	if err != nil || !ok {
		return nil, false, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, false, fmt.Errorf("stored response %s cannot be read: %w", id, err)
	}
	return &rec, true, nil
}

func (s *States) item(ctx context.Context, tenant, id string) (json.RawMessage, bool, error) {
	if s == nil || s.Store == nil {
		return nil, false, nil
	}
	b, ok, err := s.Store.Get(ctx, tenant, "item:"+id)
	return b, ok, err
}

// Bind ties the turn to call, decoded from the body Resolve returned: the
// Response object then echoes store and previous_response_id as the
// client sent them, and Encode or the stream hand the turn the object they
// send.
func (t *Turn) Bind(call *dialect.Call) {
	st := stateOf(call)
	if t == nil || st == nil {
		return
	}
	st.turn = t
	if st.over == nil {
		st.over = map[string]json.RawMessage{}
	}
	st.over["store"] = mustJSON(t.keep && t.s != nil && t.s.Store != nil)
	if t.previous != nil {
		st.over["previous_response_id"] = t.previous
	}
}

// finalObject is handed the Response object about to be sent to the
// client, whole or as the stream's final event, and stores it first: a
// client may name it in its next request as soon as it has read it.
func (st *state) finalObject(b []byte) {
	if st == nil || st.turn == nil || st.turn.kept {
		return
	}
	t := st.turn
	t.kept = true
	t.err = t.put(t.ctx, b)
	// The input is in the store now, or will never be.
	t.input = nil
}

// Stores reports whether the response to this request is to be stored
// (store:true, the default), so that the store must be reachable.
func (t *Turn) Stores() bool { return t != nil && t.keep }

// Err says why the response sent was not stored (nil when it was, or when
// nothing was to be kept: store:false, a response that did not complete):
// it is larger than the store holds for one tenant
// (statestore.ErrTooLarge), or the store failed.
func (t *Turn) Err() error {
	if t == nil {
		return nil
	}
	return t.err
}

// put stores the Response object final, unless the client asked for
// store:false or the response did not complete.
func (t *Turn) put(ctx context.Context, final []byte) error {
	if !t.keep || t.s == nil || t.s.Store == nil {
		return nil
	}
	var obj struct {
		ID     string            `json:"id"`
		Status string            `json:"status"`
		Output []json.RawMessage `json:"output"`
	}
	if json.Unmarshal(final, &obj) != nil || obj.ID == "" || (obj.Status != "completed" && obj.Status != "incomplete") {
		return nil
	}
	b, err := json.Marshal(record{Response: final, Input: t.input, Upstream: t.upstream})
	if err != nil {
		return err
	}
	if err := t.s.Store.Put(ctx, t.tenant, "resp:"+obj.ID, b, t.s.TTL); err != nil {
		return fmt.Errorf("response %s not stored: %w", obj.ID, err)
	}
	for _, it := range obj.Output {
		var p peek
		if json.Unmarshal(it, &p) != nil || p.ID == nil || *p.ID == "" {
			continue
		}
		if err := t.s.Store.Put(ctx, t.tenant, "item:"+*p.ID, it, t.s.TTL); err != nil {
			return fmt.Errorf("item %s of response %s not stored: %w", *p.ID, obj.ID, err)
		}
	}
	return nil
}

// --- GET and DELETE /v1/responses/{id} ---------------------------------

func responseNotFound(id string) *dialect.Error {
	return &dialect.Error{Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("Response with id '%s' not found.", id)}
}

// Get returns the stored Response object id of tenant, as its client got
// it (the non-streamed shape, also for a streamed response).
func (s *States) Get(ctx context.Context, tenant, id string) ([]byte, *dialect.Error) {
	rec, found, err := s.get(ctx, tenant, id)
	if err != nil {
		return nil, storeFailed(err)
	}
	if !found {
		return nil, responseNotFound(id)
	}
	return rec.Response, nil
}

// Delete removes the stored response id of tenant and its items, and
// returns OpenAI's answer, {"id","object":"response","deleted":true}.
func (s *States) Delete(ctx context.Context, tenant, id string) ([]byte, *dialect.Error) {
	rec, found, err := s.get(ctx, tenant, id)
	if err != nil {
		return nil, storeFailed(err)
	}
	if !found {
		return nil, responseNotFound(id)
	}
	var obj struct {
		Output []json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(rec.Response, &obj)
	var errs []error
	for _, it := range obj.Output {
		var p peek
		if json.Unmarshal(it, &p) == nil && p.ID != nil && *p.ID != "" {
			if _, err := s.Store.Delete(ctx, tenant, "item:"+*p.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if _, err := s.Store.Delete(ctx, tenant, "resp:"+id); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, storeFailed(err)
	}
	return mustJSON(map[string]any{"id": id, "object": "response", "deleted": true}), nil
}
