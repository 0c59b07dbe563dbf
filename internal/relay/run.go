package relay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/codecs"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/loop"
	"github.com/hookhost/hookhost/internal/telemetry"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// run is the state of one Run; it lives on the Run goroutine, except for
// what decideAll reads while tools run (which nothing writes meanwhile).
type run struct {
	cfg       *Config
	bus       *hookbus.Bus
	model     loop.Loop // the model side of the rounds; set once the session is known
	ctx       context.Context
	protocol  llm.Protocol
	endpoint  string // the front's path, for metrics
	call      *dialect.Call
	sink      dialect.Sink
	sinkErr   error
	streamed  strings.Builder // what the current round has shown so far
	lastShown string          // the text the last round showed
	guard     *guard          // the current round's, when the client streams
	// refused: transform_llm_output stopped the answer, which ends with
	// the protocol's refusal form.
	refused bool

	fwd  upstream.Forwarder // set in forward mode
	pass *upstream.Passthrough

	sessionID string
	history   []hooks.Message
	wires     map[int][]json.RawMessage // wire forms of messages this run added, by index
	restored  int                       // history[:restored] came from the client
	at        convKey                   // where the client's messages end
	pre       prefetched                // a shared store's values read ahead by restore
	res       *dialect.Result
	rounds    int
	toolsRan  bool
	// rewritten is set once the client's message stops being exactly the
	// last upstream message: a round hidden, a call answered or modified,
	// the text transformed.
	rewritten bool
	// minted maps the upstream's ids of the calls handed to the client to
	// the ids the client got instead.
	minted map[string]string
	// withContext is set when on_user_message added context to the
	// history: a final answer then keeps its round (keepFinal), so that
	// the context stays in the conversation.
	withContext bool
}

// check refuses what cannot be served before anything fires.
func (r *run) check() error {
	if r.cfg.Provider == nil {
		return &dialect.Error{Status: 500, Type: "api_error", Message: "hookhost gateway has no upstream provider configured (host configuration: set [llm] provider)"}
	}
	for _, t := range r.call.Request.Tools {
		if owner, ok := r.bus.ToolOwner(t.Name); ok {
			return dialect.Invalid("tools", fmt.Sprintf(
				"tool %q is also a tool of plugin %q on this gateway, so hookhost could not tell whose call it is; rename the request's tool", t.Name, owner))
		}
		if r.hosted(t.Name) {
			return dialect.Invalid("tools", fmt.Sprintf(
				"tool %q is also the tool of an MCP server this gateway offers the model (offer_to_model), so hookhost could not tell whose call it is; rename the request's tool", t.Name))
		}
	}
	if f, ok := r.cfg.Provider.(upstream.Forwarder); ok && f.Protocol() == r.protocol {
		r.fwd, r.pass = f, r.call.Pass
		if r.pass == nil {
			r.pass = &upstream.Passthrough{}
		}
		return nil
	}
	if len(r.call.Foreign) > 0 {
		provider := r.cfg.Provider.Name()
		if f, ok := r.cfg.Provider.(upstream.Forwarder); ok {
			provider += ", which speaks " + string(f.Protocol())
		}
		return dialect.Invalid(r.call.Foreign[0], fmt.Sprintf(
			"%s cannot be translated to the upstream's protocol (%s); send it to an upstream that speaks %s, or leave it out",
			strings.Join(r.call.Foreign, ", "), provider, r.protocol))
	}
	if u, ok := r.cfg.Provider.(llm.Unsupported); ok {
		refused, dropped := u.Unsupported(r.call.Request)
		if len(refused) > 0 {
			return dialect.Invalid(refused[0], fmt.Sprintf("%s cannot be honoured by the upstream (%s, api %s), and leaving it out would change the answer; send the request without it, or to an upstream whose API has it", strings.Join(refused, ", "), r.cfg.Provider.Name(), upstreamProtocol(r.cfg.Provider)))
		}
		for _, field := range dropped {
			r.call.Drop(field) // logged and counted below, as hints are
		}
	}
	for _, field := range r.call.Dropped {
		r.cfg.Logger.Debug("gateway: dropped a hint the upstream's protocol cannot carry", "endpoint", r.endpoint, "field", field)
		if o, ok := r.cfg.Observe.(DropObserver); ok {
			o.FieldDropped(r.endpoint, field)
		}
	}
	return nil
}

// upstreamProtocol names the protocol p speaks, for errors.
func upstreamProtocol(p llm.Provider) string {
	if f, ok := p.(upstream.Forwarder); ok {
		return string(f.Protocol())
	}
	return "its own"
}

// restore builds the history sent upstream from the client's: hidden
// rounds spliced back in place of the assistant messages they were hidden
// behind, and the client's results for calls handed to it passed through
// post_tool_call and transform_tool_result once. It reports whether this
// is a new session.
func (r *run) restore() (fresh bool, err error) {
	msgs := r.call.Request.Messages
	hist := historyOf(msgs)
	cr := r.call.Request
	at := convStart(string(r.protocol), cr.Model, cr.System, r.call.Tenant)
	carriedAt := map[string]convKey{} // call id → where its assistant message stands
	spliced := map[string]bool{}      // ids of calls whose assistant message was replaced by kept rounds
	lastMiss := -1
	h := sha256.New()
	if err := r.readAhead(at); err != nil {
		return false, err
	}
	for i, m := range msgs {
		here := at
		at = at.next(h, m)
		changed := false
		switch {
		case m.Role == hooks.RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				carriedAt[c.ID] = here
			}
			sid, hidden, ok, err := r.cfg.Store.lookupRounds(r.ctx, r.pre, r.call.Tenant, roundsKey(here, m.ToolCalls))
			if err != nil {
				return false, storeFailed(err)
			}
			if ok {
				r.sessionID = sid
				for _, k := range hidden {
					hist.add(k.Message)
					if r.pass != nil && len(k.Wire) > 0 {
						r.pass.KeepMessage(k.Message, k.Wire...)
					}
				}
				for _, c := range m.ToolCalls {
					spliced[c.ID] = true
				}
				lastMiss = -1
				continue
			}
			lastMiss = i
		case m.Role == hooks.RoleAssistant:
			// A final answer that took hidden rounds: the client holds the
			// text it was shown (joined its own way), the model gets back
			// the rounds that led to it.
			// An empty shown text would be in every message.
			sid, hidden, shown, ok, err := r.cfg.Store.lookupFinal(r.ctx, r.pre, r.call.Tenant, finalKey(here))
			if err != nil {
				return false, storeFailed(err)
			}
			if ok && shown != "" && strings.Contains(m.Content, shown) {
				r.sessionID = sid
				for _, k := range hidden {
					hist.add(k.Message)
					if r.pass != nil && len(k.Wire) > 0 {
						r.pass.KeepMessage(k.Message, k.Wire...)
					}
				}
				continue
			}
		case m.Role == hooks.RoleTool:
			if where, ok := carriedAt[m.ToolCallID]; ok {
				key := callKey(where, m.ToolCallID)
				sid, c, ok, err := r.cfg.Store.lookupHanded(r.ctx, r.pre, r.call.Tenant, key)
				if err != nil {
					return false, storeFailed(err)
				}
				if ok {
					r.sessionID = sid
					if spliced[m.ToolCallID] && c.Upstream != "" {
						// The kept rounds carry the upstream's ids; when
						// they were not spliced in, the client's own
						// history (its ids throughout) goes up instead.
						m = r.upstreamID(m, c.Upstream)
					}
					m = r.clientResult(m, key, sid, c)
					changed = true
				}
			}
		}
		if changed {
			hist.add(m)
		} else {
			hist.keep(i)
		}
	}
	r.history = hist.messages()
	r.at = at
	if r.cfg.Store != nil && lastMiss >= 0 && lastMiss == lastToolCaller(msgs) && r.hostRunsTools() {
		// Only the conversation being continued is worth a warning: a miss
		// there may mean hidden rounds expired or live on another replica
		// (or that this gateway never saw the conversation, or that the
		// client rewrote its history: these cannot be told apart).
		r.cfg.Logger.Warn("continuing a conversation whose tool calls are not in the hidden-round store; if hookhost ran plugin or MCP tools in it, the model will not see them (the entry expired, was evicted, or is on another replica)",
			"calls", len(msgs[lastMiss].ToolCalls))
	}
	r.restored = len(r.history)
	if r.sessionID == "" {
		r.sessionID = hooks.NewSessionID()
		return true, nil
	}
	return false, nil
}

// readAhead has a shared store read every value restore will look up, the
// conversation starting at start, at once: one round trip's wait instead
// of one per assistant message and handed result. The keys are restore's,
// found the same way.
func (r *run) readAhead(start convKey) error {
	if r.cfg.Store == nil || r.cfg.Store.shared == nil {
		return nil
	}
	var entries, calls []string
	carriedAt := map[string]convKey{}
	at := start
	h := sha256.New()
	for _, m := range r.call.Request.Messages {
		here := at
		at = at.next(h, m)
		switch {
		case m.Role == hooks.RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				carriedAt[c.ID] = here
			}
			entries = append(entries, roundsKey(here, m.ToolCalls))
		case m.Role == hooks.RoleAssistant:
			entries = append(entries, finalKey(here))
		case m.Role == hooks.RoleTool:
			if where, ok := carriedAt[m.ToolCallID]; ok {
				calls = append(calls, callKey(where, m.ToolCallID))
			}
		}
	}
	pre, err := r.cfg.Store.prefetch(r.ctx, r.call.Tenant, entries, calls)
	if err != nil {
		return storeFailed(err)
	}
	r.pre = pre
	return nil
}

// storeFailed is the request's error when the shared store of hidden
// rounds failed: the backend's own (a 503 naming it) when it is one for
// the client, else a 503 saying what failed. Going on without the rounds
// would show the model a history it did not write.
func storeFailed(err error) error {
	var e *dialect.Error
	if errors.As(err, &e) {
		return e
	}
	return &dialect.Error{Status: 503, Type: "api_error",
		Message: "hookhost: the state backend keeping hidden tool-call rounds failed: " + err.Error() + "; retry once it is back"}
}

// history builds the history sent upstream from the client's messages
// without copying them while it is the same: a request may carry a million
// messages, and most are sent on as they came.
type history struct {
	src  []hooks.Message
	same int // the history is src[:same] while out is nil
	out  []hooks.Message
}

func historyOf(src []hooks.Message) *history { return &history{src: src} }

// keep adds the client's message i, unchanged.
func (h *history) keep(i int) {
	if h.out == nil && i == h.same {
		h.same++
		return
	}
	h.add(h.src[i])
}

// add adds m, which is not the client's next message as it came.
func (h *history) add(m hooks.Message) {
	if h.out == nil {
		h.out = make([]hooks.Message, h.same, len(h.src)+1)
		copy(h.out, h.src[:h.same])
	}
	h.out = append(h.out, m)
}

// messages is the history. When it is the client's own it shares their
// array, capped, so that appending to it never writes into the client's.
func (h *history) messages() []hooks.Message {
	if h.out == nil {
		return h.src[:h.same:h.same]
	}
	return h.out
}

// hosted reports whether name is a tool hookhost runs from Config.Hosted
// (and not a plugin's, which wins).
func (r *run) hosted(name string) bool {
	if r.cfg.Hosted == nil {
		return false
	}
	_, ok := r.cfg.Hosted.Lookup(name)
	return ok
}

// hostRunsTools reports whether hookhost offers tools of its own here, so
// that rounds may be hidden from the client.
func (r *run) hostRunsTools() bool {
	return len(r.bus.Tools()) > 0 || (r.cfg.Hosted != nil && len(r.cfg.Hosted.Specs()) > 0)
}

func lastToolCaller(msgs []hooks.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == hooks.RoleAssistant {
			if len(msgs[i].ToolCalls) > 0 {
				return i
			}
			return -1
		}
	}
	return -1
}

// upstreamID gives the client's result m the id the upstream gave its
// call, in its wire form too.
func (r *run) upstreamID(m hooks.Message, id string) hooks.Message {
	out := m
	out.ToolCallID = id
	if r.pass != nil {
		if w, ok := r.pass.Messages().Take(m); ok {
			r.pass.KeepMessage(out, rewireIDs(w, map[string]string{m.ToolCallID: id})...)
		}
	}
	return out
}

// clientResult passes the client's result for a call hookhost handed it
// through post_tool_call, transform_tool_result and
// post_tool_call_can_add_context, once: the same result
// sent again (clients resend the whole history) gets the kept outcome.
func (r *run) clientResult(m hooks.Message, key, sid string, c handedCall) hooks.Message {
	d := resultDigest(m.Content, m.IsError)
	if c.Done && c.Digest == d {
		m.Content, m.IsError = c.Result.Content, c.Result.IsError
		return m
	}
	status := hooks.StatusOK
	if m.IsError {
		status = hooks.StatusError
	}
	// Plugins get results as JSON (a plain-text answer as a JSON string);
	// the model gets the client's own content unless a plugin rewrote it.
	ev := hooks.ToolCallOutcome{
		SessionID: sid, CallID: m.ToolCallID, Name: c.Name, Arguments: c.Arguments,
		Result: hooks.ToolResult{Content: m.Content, IsError: m.IsError}.AsJSON(), Status: status,
		Origin: hooks.OriginClient,
	}
	if r.bus.Subscribed(hooks.PostToolCall, c.Name) {
		r.bus.PostToolCall(ev)
	}
	res := hooks.ToolResult{Content: m.Content, IsError: m.IsError}
	if r.bus.Subscribed(hooks.TransformToolResult, c.Name) {
		if t, by := r.bus.TransformToolResult(r.ctx, ev); len(by) > 0 {
			res = t.AsJSON()
			var s string
			if !json.Valid([]byte(m.Content)) && json.Unmarshal([]byte(res.Content), &s) == nil {
				// Plugins saw the client's plain text as a JSON string;
				// the model gets plain text back, as the client wrote it.
				res.Content = s
			}
		}
	}
	if r.bus.Subscribed(hooks.PostToolCallCanAddContext, c.Name) {
		// Plugins see the result as transformed, as JSON; the model gets
		// the context after the result it gets.
		ev.Result = res.AsJSON()
		if added, _ := r.bus.PostToolCallCanAddContext(r.ctx, ev); added != "" {
			res.Content = hookbus.WithContext(res.Content, added)
		}
	}
	if err := r.cfg.Store.record(r.ctx, r.pre, r.call.Tenant, key, sid, c, d, res); err != nil {
		// The hooks fire again on the result if it is sent again.
		r.cfg.Logger.Warn("the outcome of a client's tool result was not kept; post_tool_call and transform_tool_result fire again if it is sent again", "error", err)
	}
	m.Content, m.IsError = res.Content, res.IsError
	return m
}

// loop runs upstream rounds until a final answer, calls for the client, the
// iteration budget or a failure.
func (r *run) loop() (hooks.EndReason, error) {
	if done, reason, err := r.userMessage(); done {
		return reason, err
	}
	var wire *upstream.WireResponse
	for iter := 1; iter <= r.cfg.MaxIterations; iter++ {
		r.rounds = iter
		resp, w, err := r.infer(iter)
		if err != nil {
			return r.failReason(), err
		}
		wire = w
		stopped := r.guard != nil && r.guard.stopped != nil
		final := len(resp.Message.ToolCalls) == 0 || stopped
		r.show(iter, resp.Message.Content, final)
		if err := r.sinkFailed(); err != nil {
			return hooks.EndCancelled, err
		}
		if final {
			stop := resp.StopReason
			if stop == "" {
				stop = hooks.StopEndTurn
			}
			if r.refused {
				stop = hooks.StopRefusal
			}
			if iter > 1 || r.withContext {
				m, form := resp.Message, codecs.HistoryForm(r.protocol, wire)
				if stopped && len(m.ToolCalls) > 0 {
					// The answer ended before its calls: none is run or
					// handed, so none may stand in the history.
					m.ToolCalls, form = nil, nil
				}
				r.add(m, form)
				if err := r.keepFinal(); err != nil {
					return r.failReason(), err
				}
			}
			return r.finish(stop, wire, iter == 1)
		}

		ds, err := r.decide(resp.Message.ToolCalls)
		if err != nil {
			return r.failReason(), err
		}
		r.add(resp.Message, codecs.HistoryForm(r.protocol, wire))
		var handed []hooks.ToolCall
		for _, d := range ds {
			if !d.answered {
				handed = append(handed, d.call)
				if d.modified {
					r.rewritten = true
				}
				continue
			}
			r.rewritten = true
			r.add(hooks.Message{
				Role: hooks.RoleTool, ToolCallID: d.call.ID, ToolName: d.call.Name,
				Content: d.result.Content, IsError: d.result.IsError,
			}, nil)
		}
		if len(handed) > 0 {
			shown := r.mint(handed)
			// Kept before the client sees the calls: calls it could not
			// continue from must not be handed over.
			if err := r.keep(handed, shown); err != nil {
				return r.failReason(), err
			}
			r.res.ToolCalls = shown
			for _, c := range shown {
				r.sinkDo(func(s dialect.Sink) error { return s.ToolCall(c) })
			}
			return r.finish(hooks.StopToolUse, wire, iter == 1)
		}
		r.sinkDo(func(s dialect.Sink) error { return s.EndRound() })
		if err := r.sinkFailed(); err != nil {
			return hooks.EndCancelled, err
		}
	}
	msg := fmt.Sprintf("hookhost stopped after %d upstream rounds without a final answer (conversation.max_iterations)", r.cfg.MaxIterations)
	r.res.Text = append(r.res.Text, msg)
	r.sinkDo(func(s dialect.Sink) error { return s.Text(msg) })
	r.rewritten = true
	if _, err := r.finish(hooks.StopOther, wire, false); err != nil {
		return hooks.EndCancelled, err
	}
	return hooks.EndMaxIterations, nil
}

// userMessage fires on_user_message when the request brings a new user
// message: its last message is the user's. A request that continues with
// tool results (or an assistant prefill) brings none, and a client that
// resends its history sends each earlier user message again but never as
// the last one, so each user message fires once, in the request that
// brought it. A block is the answer, in the protocol's shape and streamed
// when the client streams, and no upstream round is made (done is set).
// Context joins the history as a message of its own after the user's
// (loop.WithUserContext), as this request's addition: it goes upstream in
// every round of this request, is never shown to the client, and is kept
// with the rounds in the Store, so the client's continuation and later
// turns carry it while the entry lives.
func (r *run) userMessage() (done bool, reason hooks.EndReason, err error) {
	msgs := r.call.Request.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != hooks.RoleUser || !r.bus.Subscribed(hooks.OnUserMessage, "") {
		return false, "", nil
	}
	um := r.model.UserMessage(r.ctx, len(msgs)-1, msgs[len(msgs)-1].Content)
	if um.Blocked {
		r.rewritten = true
		r.res.Text = append(r.res.Text, um.Message)
		r.sinkDo(func(s dialect.Sink) error { return s.Text(um.Message) })
		reason, err := r.finish(hooks.StopEndTurn, nil, false)
		return true, reason, err
	}
	if um.Context != "" {
		// The user's message is the history's last: the context follows it.
		r.add(hookbus.ContextMessage(um.Context), nil)
		r.withContext = true
	}
	return false, "", nil
}

func (r *run) failReason() hooks.EndReason {
	if r.ctx.Err() != nil {
		return hooks.EndCancelled
	}
	return hooks.EndError
}

func (r *run) finish(stop hooks.StopReason, wire *upstream.WireResponse, single bool) (hooks.EndReason, error) {
	r.res.Stop = stop
	if r.fwd != nil {
		r.res.Wire = wire
		if wire != nil && len(r.minted) > 0 {
			// The client's copy carries the ids it was handed; the
			// upstream's stays as it came, for the kept rounds.
			r.res.Wire = &upstream.WireResponse{Fields: wire.Fields, Message: rewireIDs(wire.Message, r.minted)}
		}
		r.res.WholeWire = wire != nil && single && !r.rewritten
	}
	r.sinkDo(func(s dialect.Sink) error { return s.Finish(stop, r.res.Usage) })
	if err := r.sinkFailed(); err != nil {
		return hooks.EndCancelled, err
	}
	return hooks.EndCompleted, nil
}

// add appends a message this run produced to the history, and its wire
// form to what Forward sends.
func (r *run) add(m hooks.Message, wire []json.RawMessage) {
	if len(wire) > 0 {
		if r.wires == nil {
			r.wires = map[int][]json.RawMessage{}
		}
		r.wires[len(r.history)] = wire
		if r.pass != nil {
			r.pass.KeepMessage(m, wire...)
		}
	}
	r.history = append(r.history, m)
}

// mint gives the calls handed to the client ids of hookhost's own (see
// mintID); a call's id the upstream used twice gets one id.
func (r *run) mint(handed []hooks.ToolCall) []hooks.ToolCall {
	r.minted = map[string]string{}
	shown := make([]hooks.ToolCall, len(handed))
	for i, c := range handed {
		id, ok := r.minted[c.ID]
		if !ok {
			id = mintID(c.ID)
			if c.ID != "" {
				r.minted[c.ID] = id
			}
		}
		shown[i] = c
		shown[i].ID = id
	}
	return shown
}

// keep stores what this run added to the history, keyed by the calls
// handed to the client (as the client got them), so the client's
// continuation gets it back. In forward mode that is done even when
// nothing was hidden and no plugin runs: the round's wire message holds
// what the client's echo of it may lack (Anthropic's thinking blocks and
// their signatures, which a stream to the client cannot carry), and the
// upstream refuses a continuation without it.
func (r *run) keep(handed, shown []hooks.ToolCall) error {
	if r.cfg.Store == nil || (r.bus == nil && r.cfg.Hosted == nil && r.fwd == nil) {
		return nil
	}
	for _, c := range handed {
		if c.ID == "" {
			// An id-less call cannot be matched when the client continues.
			r.cfg.Logger.Debug("hidden rounds not kept: the upstream gave a tool call no id", "tool", c.Name)
			return nil
		}
	}
	// The client's next request holds its messages as sent, then the
	// assistant message with the handed calls: that is where they stand.
	e := &entry{key: roundsKey(r.at, shown), tenant: r.call.Tenant, sessionID: r.sessionID, calls: map[string]*handedCall{}}
	for i := r.restored; i < len(r.history); i++ {
		e.hidden = append(e.hidden, keptMessage{Message: r.history[i], Wire: r.wires[i]})
	}
	for i, c := range shown {
		e.calls[callKey(r.at, c.ID)] = &handedCall{Name: c.Name, Arguments: c.Arguments, Upstream: handed[i].ID}
	}
	evicted, kept, err := r.cfg.Store.keepEntry(r.ctx, e)
	if err != nil {
		return storeFailed(err)
	}
	if so, ok := r.cfg.Observe.(StoreObserver); ok && evicted > 0 {
		so.StoreEvicted(evicted)
	}
	if !kept {
		log := r.cfg.Logger.Warn
		if r.bus == nil && r.cfg.Hosted == nil {
			// Only the round's own wire form is lost: worth no warning on
			// every call when the store is disabled.
			log = r.cfg.Logger.Debug
		}
		log("hidden rounds not kept: the store is disabled or the rounds exceed its byte cap; the client's continuation will go upstream without them",
			"session", r.sessionID, "calls", len(handed))
	}
	return nil
}

// keepFinal stores the rounds that led to a final answer, keyed by where
// the answer stands, so that the client's next turn gets them back.
func (r *run) keepFinal() error {
	if r.cfg.Store == nil || (r.bus == nil && r.cfg.Hosted == nil) || r.lastShown == "" {
		// With no text shown there is nothing to recognise the answer by
		// in the client's next turn.
		return nil
	}
	e := &entry{key: finalKey(r.at), tenant: r.call.Tenant, sessionID: r.sessionID}
	e.shown = r.lastShown
	for i := r.restored; i < len(r.history); i++ {
		e.hidden = append(e.hidden, keptMessage{Message: r.history[i], Wire: r.wires[i]})
	}
	evicted, kept, err := r.cfg.Store.keepEntry(r.ctx, e)
	if err != nil {
		return storeFailed(err)
	}
	if so, ok := r.cfg.Observe.(StoreObserver); ok && evicted > 0 {
		so.StoreEvicted(evicted)
	}
	if !kept {
		r.cfg.Logger.Warn("hidden rounds not kept: the store is disabled or the rounds exceed its byte cap; the client's next turn will go upstream without them",
			"session", r.sessionID)
	}
	return nil
}

// --- one upstream round ----------------------------------------------------

func (r *run) infer(iter int) (hooks.ModelResponse, *upstream.WireResponse, error) {
	cr := r.call.Request
	req := hooks.ModelRequest{
		Model: cr.Model, System: cr.System, MaxTokens: cr.MaxTokens, Temperature: cr.Temperature,
		TopP: cr.TopP, Stop: cr.Stop, Seed: cr.Seed, User: cr.User,
		Tools:    r.tools(),
		Messages: r.history,
	}
	r.streamed.Reset()
	r.guard = nil
	if r.sink != nil {
		r.guard = r.newGuard()
	}
	// A final answer held whole, or not streamed, is transformed whole
	// (show): its transform may go in the post-call stage.
	r.model.WholeOutput = r.guard == nil || r.guard.whole
	resp, wire, err := loop.Infer(r.ctx, &r.model, iter, req, func(ctx context.Context, c loop.Call) (hooks.ModelResponse, *upstream.WireResponse, error) {
		if r.guard == nil {
			return r.upstream(ctx, c, nil)
		}
		return r.guard.call(ctx, c)
	})
	if err != nil {
		return resp, nil, r.upstreamErr(err)
	}
	if r.guard != nil {
		r.guard.end()
	}
	return resp, wire, nil
}

// tools are those a round offers: the client's, the plugins', then the
// hosted ones a plugin tool does not shadow.
func (r *run) tools() []hooks.ToolSpec {
	plugin := r.bus.Tools()
	var hosted []hooks.ToolSpec
	if r.cfg.Hosted != nil {
		hosted = r.cfg.Hosted.Specs()
	}
	n := len(r.call.Request.Tools) + len(plugin) + len(hosted)
	if n == 0 {
		return nil // as the request had them: none, not an empty list
	}
	out := make([]hooks.ToolSpec, 0, n)
	out = append(append(out, r.call.Request.Tools...), plugin...)
	for _, t := range hosted {
		if _, owned := r.bus.ToolOwner(t.Name); !owned {
			out = append(out, t)
		}
	}
	return out
}

// upstream makes one model call the way this request reaches the upstream
// and counts it.
func (r *run) upstream(ctx context.Context, c loop.Call, onText func(string)) (hooks.ModelResponse, *upstream.WireResponse, error) {
	var (
		resp hooks.ModelResponse
		wire *upstream.WireResponse
		err  error
	)
	announce, announces := r.sink.(dialect.InputAnnouncer)
	if announces && c.Iteration == 1 {
		// The stream's start may wait for the first round's real input
		// count (see dialect.InputAnnouncer); later rounds come after it.
		ctx = llm.WithInputReport(ctx, announce.InputTokens)
	}
	switch st, streams := r.cfg.Provider.(llm.Streamer); {
	case c.Provided != nil:
		// A plugin answered: no upstream call, and the client gets the
		// answer as it would get the model's, streamed when it streams.
		resp = c.Provided.Response
		if onText != nil && resp.Message.Content != "" {
			onText(resp.Message.Content)
		}
		r.rewritten = true
	case r.fwd != nil:
		resp, wire, err = r.fwd.Forward(ctx, c.Request, r.pass, onText)
	case streams && onText != nil:
		resp, err = st.Stream(ctx, c.Request, onText)
	default:
		resp, err = r.cfg.Provider.Complete(ctx, c.Request)
	}
	if announces && c.Iteration == 1 && err == nil && resp.Usage.InputTokens > 0 {
		// No text was shown yet (held, a round of calls only, or a
		// provider that does not stream): the whole round's count is
		// known before the message starts.
		announce.InputTokens(resp.Usage.InputTokens)
	}
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	if r.cfg.Observe != nil && c.Provided == nil {
		r.cfg.Observe.Round(r.protocol)
	}
	return resp, wire, err
}

// upstreamErr is what a failed upstream call means for the client: the
// run's cancellation, or the upstream's failure.
func (r *run) upstreamErr(err error) error {
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return r.providerErr(err)
}

func (r *run) providerErr(err error) error {
	var pe *llm.ProviderError
	var de *dialect.Error
	if errors.As(err, &pe) || errors.As(err, &de) {
		return err
	}
	return &llm.ProviderError{Provider: r.cfg.Provider.Name(), Message: "the upstream call failed", Err: err}
}

// logger logs what the model side of the loop did that the gateway's
// operator should know of.
type logger struct {
	loop.Quiet
	r *run
}

func (l logger) ReissueFailed(_ int, rq *hookbus.ReissueRequest, err error) {
	// The first answer is still good; a failed escalation must not cost
	// the client its answer.
	l.r.cfg.Logger.Warn("reissued upstream call failed; keeping the first answer", "plugin", rq.Plugin, "error", l.r.providerErr(err))
}

// show makes a round's text the client's: streamed already (through the
// guard's windows), or now that the hooks that could replace it have
// answered. The final answer goes through transform_llm_output, unless its
// windows did.
func (r *run) show(iter int, text string, final bool) {
	if g := r.guard; g.streamed() {
		text = r.streamed.String()
		if len(g.by) > 0 || g.stopped != nil {
			r.rewritten = true
		}
		r.refused = g.stopped != nil
	} else {
		if final {
			ch := r.model.TransformOutput(r.ctx, iter, hooks.LLMOutput{Text: text})
			switch {
			case ch.Stop != nil:
				text, r.refused, r.rewritten = ch.Stop.Message, true, true
			case len(ch.By) > 0:
				text, r.rewritten = ch.Text, true
			}
		}
		if r.sink != nil && r.streamed.Len() > 0 {
			text = r.streamed.String()
		} else if r.sink != nil && text != "" {
			// Held text, or a provider that does not stream.
			r.sinkDo(func(s dialect.Sink) error { return s.Text(text) })
		}
	}
	if text != "" {
		r.res.Text = append(r.res.Text, text)
	}
	r.lastShown = text
}

// --- the round's tool calls ----------------------------------------------

// decision is what became of one tool call of a response.
type decision struct {
	call     hooks.ToolCall // as the client receives it, or as it ran
	answered bool           // hookhost answered it: result joins the history
	result   hooks.ToolResult
	modified bool
	ran      bool
}

// needsBus reports whether any call of calls is for a plugin to decide
// or for hookhost to run, either of which may take a while.
func (r *run) needsBus(calls []hooks.ToolCall) bool {
	for _, c := range calls {
		if _, ok := r.bus.ToolOwner(c.Name); ok || r.hosted(c.Name) ||
			r.bus.Subscribed(hooks.PreToolCall, c.Name) || r.bus.Subscribed(hooks.PreToolCallCanProvideResult, c.Name) {
			return true
		}
	}
	return false
}

// decide runs the round's tool calls through the hooks off the Run
// goroutine, pinging the stream meanwhile (a Sink is single-goroutine).
func (r *run) decide(calls []hooks.ToolCall) ([]decision, error) {
	if !r.needsBus(calls) {
		return r.decideAll(calls), nil
	}
	done := make(chan []decision, 1)
	go func() { done <- r.decideAll(calls) }()
	var tick <-chan time.Time
	if r.sink != nil {
		t := time.NewTicker(r.cfg.Keepalive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ds := <-done:
			return ds, nil
		case <-tick:
			r.sinkDo(func(s dialect.Sink) error { return s.Ping() })
		case <-r.ctx.Done():
			// The Bus gives up on a cancelled context at once, so this
			// wait is short, and no goroutine outlives the Run.
			ds := <-done
			r.noteRan(ds)
			return nil, r.ctx.Err()
		}
	}
}

func (r *run) noteRan(ds []decision) {
	for _, d := range ds {
		if d.ran {
			r.toolsRan = true
		}
	}
}

func (r *run) decideAll(calls []hooks.ToolCall) []decision {
	ds := make([]decision, len(calls))
	for i, c := range calls {
		d := &ds[i]
		if _, ok := r.bus.ToolOwner(c.Name); ok {
			out := r.model.RunTool(r.ctx, c)
			*d = decision{call: out.Call, answered: true, result: out.Result, ran: true}
			r.count("plugin")
			continue
		}
		if r.hosted(c.Name) {
			out := r.model.RunTool(r.ctx, c)
			*d = decision{call: out.Call, answered: true, result: out.Result, ran: true}
			r.count("mcp")
			continue
		}
		*d = r.decideClient(c)
	}
	r.noteRan(ds)
	return ds
}

// decideClient asks pre_tool_call and pre_tool_call_can_provide_result
// about a call for the client's own tool, through one ToolRun: both are
// asked before the client sees the call, so a plugin serving both (and
// transform_tool_result) may answer them in one exchange. A call the
// client is to run ends its ToolRun there; the client's result, when it
// comes, goes through the Bus (clientResult).
func (r *run) decideClient(c hooks.ToolCall) decision {
	d := decision{call: c}
	args := bytes.TrimSpace(c.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil || r.ctx.Err() != nil {
		// Arguments that are not an object are the client's to reject;
		// plugins are promised objects.
		r.count("client")
		return d
	}
	req := hooks.ToolCallRequest{SessionID: r.sessionID, CallID: c.ID, Name: c.Name, Arguments: args, Origin: hooks.OriginClient}
	// The hook calls below are children of this call's span.
	how := "client"
	ctx, span := telemetry.StartToolCall(r.ctx, c)
	defer func() { telemetry.EndToolCall(span, dispatch.Outcome{Path: dispatch.Path(how), Result: d.result}) }()
	tr := r.bus.StartToolCall(req)
	defer tr.Close()
	var status hooks.CallStatus
	if r.bus.Subscribed(hooks.PreToolCall, c.Name) {
		pre := tr.PreToolCall(ctx)
		switch {
		case pre.Blocked:
			d.answered, d.result, status, how = true, dispatch.ErrorResult(pre.Message), hooks.StatusBlocked, "blocked"
		case len(pre.ModifiedBy) > 0:
			d.call.Arguments, req.Arguments, d.modified = pre.Arguments, pre.Arguments, true
		}
		if pre.Asked() {
			// The client runs its own tools under its own permission flow,
			// which is where a person approves: the call goes back to it,
			// and no plugin may answer it in the client's place.
			r.cfg.Logger.Info("gateway: a plugin asks for approval of a client's tool call; the client's own permission flow decides",
				"tool", c.Name, "call", c.ID, "plugins", pre.AskedBy, "reason", pre.AskReason)
			r.count(how)
			return d
		}
	}
	if !d.answered && ctx.Err() == nil && r.bus.Subscribed(hooks.PreToolCallCanProvideResult, c.Name) {
		if p := tr.ProvideResult(ctx); p != nil {
			d.answered, d.result, status, how = true, p.ToolResult.AsJSON(), hooks.ProvidedBy(p.Plugin), "provided"
		}
	}
	r.count(how)
	if !d.answered {
		return d
	}
	d.ran = true
	d.call.Arguments = req.Arguments
	ev := hooks.ToolCallOutcome{
		SessionID: r.sessionID, CallID: c.ID, Name: c.Name, Arguments: req.Arguments, Result: d.result, Status: status,
		Origin: hooks.OriginClient,
	}
	if r.bus.Subscribed(hooks.PostToolCall, c.Name) {
		tr.Done(ev)
	}
	if r.bus.Subscribed(hooks.TransformToolResult, c.Name) {
		if t, by := tr.Transform(ctx, ev); len(by) > 0 {
			d.result = t.AsJSON()
		}
	}
	if r.bus.Subscribed(hooks.PostToolCallCanAddContext, c.Name) {
		ev.Result = d.result
		if added, _ := r.bus.PostToolCallCanAddContext(ctx, ev); added != "" {
			d.result.Content = hookbus.WithContext(d.result.Content, added)
		}
	}
	return d
}

func (r *run) count(how string) {
	if r.cfg.Observe != nil {
		r.cfg.Observe.ToolCall(how)
	}
}

// --- the sink ----------------------------------------------------------------

// sinkDo calls the stream, unless there is none or it already failed.
func (r *run) sinkDo(f func(dialect.Sink) error) {
	if r.sink == nil || r.sinkErr != nil {
		return
	}
	if err := f(r.sink); err != nil {
		r.sinkErr = err
	}
}

// sinkFailed turns a failed stream write (the client is gone) into the
// cancellation it amounts to.
func (r *run) sinkFailed() error {
	if r.sinkErr == nil {
		return nil
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("relay: writing the stream to the client failed (%v): %w", r.sinkErr, context.Canceled)
}
