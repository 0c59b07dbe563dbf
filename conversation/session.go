// Package conversation runs the agent loop: user message → model → tool
// calls → tool results → model … → final answer, firing the model-side
// hooks around every model call and sending tool calls through dispatch.
//
// One Send is one run. Per iteration it fires pre_tool_list_finalized and
// pre_api_request_mutable, calls the model, fires post_llm_call and
// post_llm_call_can_reissue (honouring at most one reissue per iteration,
// which does not consume the iteration budget), then runs the response's tool
// calls. The final text goes through transform_llm_output. on_session_start
// fires on the first run, on_session_end after every run.
//
// Before the first model call of a run, on_user_message fires for the
// run's message. A block ends the run: the block's message is the answer
// (and joins the history as the assistant's), no model is called.
// Context joins the history as a user message of its own right after the
// user's (loop.WithUserContext), so the model sees it in this run and in
// every later one, as a transcript keeps it.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/loop"
	"github.com/hookhost/hookhost/internal/telemetry"
	"github.com/hookhost/hookhost/llm"
)

// DefaultMaxIterations bounds model calls per run when Options leaves it 0;
// the gateway's relay has the same default.
const DefaultMaxIterations = loop.DefaultMaxIterations

// Options configure a Session.
type Options struct {
	Provider      llm.Provider
	Model         string
	System        string
	MaxIterations int
	Route         hooks.Route
	// Bus is used only on the gateway route; on the bypass route no hook
	// fires whatever is passed here.
	Bus   *hookbus.Bus
	Tools *dispatch.Registry
	// Hosted are tools hookhost runs beside the native ones whose set may
	// change between model calls (the MCP servers' with offer_to_model):
	// they are read again for every call, offered after the native tools
	// on both routes, and run through the same pipeline.
	Hosted dispatch.ToolSet
	// Trace, when set, receives a readable account of each step.
	Trace func(Event)
	// OnText, when set and the provider implements llm.Streamer, receives
	// the model's text as it is generated. It sees every model call's raw
	// text: that of a response which goes on to call tools, and that of a
	// response a plugin then reissues, as well as the final answer before
	// transform_llm_output rewrites it (Turn.Answer has the rewritten one).
	OnText func(delta string)
	// Approve, when set, asks a person whether a tool call a pre_tool_call
	// plugin answered ask on may go ahead (reason is every asker's
	// reason). Approved, the call runs with its arguments after every
	// modify; denied, failed, or with no Approve, it is blocked with the
	// reason in its error result, and post_tool_call sees it blocked.
	Approve func(ctx context.Context, call hooks.ToolCall, reason string) (bool, error)
}

// Event is one step of a run, for a human-readable trace.
type Event struct {
	Iteration int
	Kind      EventKind
	Text      string
}

// EventKind groups trace events.
type EventKind string

// Trace event kinds.
const (
	EventRoute     EventKind = "route"
	EventHook      EventKind = "hook"
	EventModelCall EventKind = "model"
	EventReissue   EventKind = "reissue"
	EventToolCall  EventKind = "tool"
	EventAnswer    EventKind = "answer"
)

// Inference records one model call.
type Inference struct {
	Iteration int
	Model     string
	Usage     hooks.Usage
	Duration  time.Duration
	Escalated bool   // this call was a reissue
	Reason    string // the reissue reason, for escalated calls
	// ProvidedBy names the plugin that answered this call instead of the
	// model (pre_llm_call_can_provide_response); empty when the model did.
	ProvidedBy string
	Err        error // the call failed
}

// Turn is the result of one run.
type Turn struct {
	Answer     string
	EndReason  hooks.EndReason
	Iterations int
	Usage      hooks.Usage // summed over every inference, reissues included
	Inferences []Inference
	ToolCalls  []dispatch.Outcome
	// RequestID is the id this turn's hook calls carry in the decision
	// log: the one on Send's context (hookbus.WithRequestID), else
	// "<session id>.<turn number>".
	RequestID string
}

// Session is one conversation: an id and its message history. It is not
// safe for concurrent Sends.
type Session struct {
	id       string
	opts     Options
	bus      *hookbus.Bus // nil on the bypass route
	pipeline dispatch.Pipeline
	history  []hooks.Message
	started  bool
	turns    int
}

// New starts a session. It fires nothing until the first Send.
func New(opts Options) (*Session, error) {
	if opts.Provider == nil {
		return nil, errors.New("host: conversation needs a model provider")
	}
	if opts.Model == "" {
		return nil, errors.New("host: conversation needs a model name")
	}
	if opts.MaxIterations < 0 {
		return nil, fmt.Errorf("host: max iterations %d is negative", opts.MaxIterations)
	}
	if opts.MaxIterations == 0 {
		opts.MaxIterations = DefaultMaxIterations
	}
	switch opts.Route {
	case hooks.RouteGateway, hooks.RouteBypass:
	case "":
		opts.Route = hooks.RouteBypass
	default:
		return nil, fmt.Errorf("host: unknown route %q", opts.Route)
	}
	s := &Session{id: hooks.NewSessionID(), opts: opts}
	if opts.Route == hooks.RouteGateway {
		s.bus = opts.Bus
	}
	s.pipeline = dispatch.Pipeline{Registry: opts.Tools, Bus: s.bus, Hosted: opts.Hosted, Approve: opts.Approve}
	return s, nil
}

// ID returns the session id plugins see.
func (s *Session) ID() string { return s.id }

// Route returns the route this session's traffic takes.
func (s *Session) Route() hooks.Route { return s.opts.Route }

// History returns a copy of the messages so far.
func (s *Session) History() []hooks.Message { return append([]hooks.Message(nil), s.history...) }

func (s *Session) trace(iter int, kind EventKind, format string, a ...any) {
	if s.opts.Trace != nil {
		s.opts.Trace(Event{Iteration: iter, Kind: kind, Text: fmt.Sprintf(format, a...)})
	}
}

// Tools returns the tool list offered to the model before hooks: native
// tools, then the hosted ones (Options.Hosted) as they are now, plus
// plugin tools on the gateway route. A plugin tool allowed to override a
// native one replaces it in place.
func (s *Session) Tools() []hooks.ToolSpec {
	tools := s.opts.Tools.Specs()
	if s.opts.Hosted != nil {
		for _, t := range s.opts.Hosted.Specs() {
			if _, native := s.opts.Tools.Lookup(t.Name); !native {
				tools = append(tools, t)
			}
		}
	}
	if s.bus == nil {
		return tools
	}
	index := map[string]int{}
	for i, t := range tools {
		index[t.Name] = i
	}
	for _, t := range s.bus.Tools() {
		if i, ok := index[t.Name]; ok {
			tools[i] = t
			continue
		}
		tools = append(tools, t)
	}
	return tools
}

// Send runs one user message to a final answer. A model failure ends the
// run with an error (after on_session_end); tool and plugin failures never
// do. When the iteration budget runs out the Turn says so, without error.
func (s *Session) Send(ctx context.Context, text string) (*Turn, error) {
	if !s.started {
		s.started = true
		s.trace(0, EventRoute, "route: %s", routeLine(s.opts.Route))
		s.bus.OnSessionStart(hooks.SessionStart{SessionID: s.id, Model: s.opts.Model, Route: s.opts.Route})
	}
	s.history = append(s.history, hooks.Message{Role: hooks.RoleUser, Content: text})
	s.turns++
	turn := &Turn{RequestID: hookbus.RequestID(ctx)}
	if turn.RequestID == "" {
		turn.RequestID = fmt.Sprintf("%s.%d", s.id, s.turns)
		ctx = hookbus.WithRequestID(ctx, turn.RequestID)
	}
	ctx, span := telemetry.StartRequest(ctx, "hookhost.turn", turn.RequestID, attribute.String(telemetry.AttrSessionID, s.id))
	err := s.run(ctx, turn)
	telemetry.EndRequest(span, 0, err)
	end := hooks.SessionEnd{
		SessionID: s.id, Model: s.opts.Model, Route: s.opts.Route,
		Reason: turn.EndReason, Iterations: turn.Iterations, Usage: turn.Usage,
	}
	if err != nil {
		end.Error = err.Error()
	}
	s.bus.OnSessionEnd(end)
	return turn, err
}

func routeLine(r hooks.Route) string {
	if r == hooks.RouteGateway {
		return "gateway (plugin tools offered, hooks fire)"
	}
	return "bypass (no plugin tool offered, no hook fires)"
}

func (s *Session) run(ctx context.Context, turn *Turn) error {
	l := &loop.Loop{Bus: s.bus, Pipeline: &s.pipeline, SessionID: s.id, Route: s.opts.Route, Observer: &tracer{s: s, turn: turn}, WholeOutput: true}
	if blocked := s.userMessage(ctx, l, turn); blocked {
		return nil
	}
	for iter := 1; iter <= s.opts.MaxIterations; iter++ {
		turn.Iterations = iter
		req := hooks.ModelRequest{
			Model: s.opts.Model, System: s.opts.System, Tools: s.Tools(),
			// A copy: a library user's Provider may keep or change the
			// request's messages, and the session's history must not
			// change with them.
			Messages: append([]hooks.Message(nil), s.history...),
		}
		resp, _, err := loop.Infer(ctx, l, iter, req, s.complete)
		if err != nil {
			turn.EndReason = hooks.EndError
			if ctx.Err() != nil {
				turn.EndReason = hooks.EndCancelled
			}
			return err
		}
		s.history = append(s.history, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			turn.Answer, _ = l.Output(ctx, iter, resp.Message.Content)
			turn.EndReason = hooks.EndCompleted
			return nil
		}
		outs, results, err := l.RunTools(ctx, iter, resp.Message.ToolCalls)
		turn.ToolCalls = append(turn.ToolCalls, outs...)
		s.history = append(s.history, results...)
		if err != nil {
			turn.EndReason = hooks.EndCancelled
			return err
		}
	}
	turn.EndReason = hooks.EndMaxIterations
	turn.Answer = fmt.Sprintf("Stopped after %d iterations without a final answer.", s.opts.MaxIterations)
	s.trace(s.opts.MaxIterations, EventAnswer, "iteration budget exhausted")
	return nil
}

// userMessage fires on_user_message for the message just added. A block
// ends the turn with the block's message as the answer, no model called;
// context joins the history as a message of its own right after the
// user's, where the model sees it in this turn and every later one.
func (s *Session) userMessage(ctx context.Context, l *loop.Loop, turn *Turn) (blocked bool) {
	at := len(s.history) - 1
	um := l.UserMessage(ctx, at, s.history[at].Content)
	if um.Blocked {
		s.trace(0, EventHook, "on_user_message: %s blocked the message; its message is the answer", um.BlockedBy)
		s.history = append(s.history, hooks.Message{Role: hooks.RoleAssistant, Content: um.Message})
		turn.Answer, turn.EndReason = um.Message, hooks.EndCompleted
		return true
	}
	if um.Context != "" {
		s.history = loop.WithUserContext(s.history, at, um.Context)
		s.trace(0, EventHook, "on_user_message: %v added context", um.ContextBy)
	}
	return false
}

// complete calls the model once, streaming when the caller wants the text
// as it comes.
func (s *Session) complete(ctx context.Context, c loop.Call) (hooks.ModelResponse, struct{}, error) {
	if c.Provided != nil {
		// A plugin answered: shown as the model's answer would have been.
		if _, ok := s.opts.Provider.(llm.Streamer); ok && s.opts.OnText != nil && c.Provided.Response.Message.Content != "" {
			s.opts.OnText(c.Provided.Response.Message.Content)
		}
		return c.Provided.Response, struct{}{}, nil
	}
	if st, ok := s.opts.Provider.(llm.Streamer); ok && s.opts.OnText != nil {
		resp, err := st.Stream(ctx, c.Request, s.opts.OnText)
		return resp, struct{}{}, err
	}
	resp, err := s.opts.Provider.Complete(ctx, c.Request)
	return resp, struct{}{}, err
}

// tracer records a run's inferences in its Turn and traces what the hooks
// and the model did.
type tracer struct {
	s    *Session
	turn *Turn
}

func (t *tracer) ToolListReplaced(iter int, ch *hookbus.ToolListChange) {
	t.s.trace(iter, EventHook, "pre_tool_list_finalized: %s replaced the tool list (%d tools)", ch.Plugin, len(ch.Tools))
}

func (t *tracer) RequestChanged(iter int, changes []hookbus.RequestChange) {
	for _, c := range changes {
		t.s.trace(iter, EventHook, "pre_api_request_mutable: %s set %v", c.Plugin, c.Fields)
	}
}

func (t *tracer) ModelCalled(ev hooks.Inference, resp hooks.ModelResponse, err error) {
	t.turn.Inferences = append(t.turn.Inferences, Inference{
		Iteration: ev.Iteration, Model: ev.Model, Usage: ev.Usage, Duration: ev.Duration,
		Escalated: ev.Escalated, Reason: ev.Reason, ProvidedBy: ev.ProvidedBy, Err: err,
	})
	t.turn.Usage = t.turn.Usage.Add(resp.Usage)
	if err != nil {
		t.s.trace(ev.Iteration, EventModelCall, "model %s failed: %v", ev.Model, err)
		return
	}
	if ev.ProvidedBy != "" {
		t.s.trace(ev.Iteration, EventModelCall, "model %s (provided by %s): %s (%d in / %d out tokens)", ev.Model, ev.ProvidedBy, summarize(resp.Message), resp.Usage.InputTokens, resp.Usage.OutputTokens)
		return
	}
	t.s.trace(ev.Iteration, EventModelCall, "model %s: %s (%d in / %d out tokens)", ev.Model, summarize(resp.Message), resp.Usage.InputTokens, resp.Usage.OutputTokens)
}

func (t *tracer) ResponseProvided(iter int, p *hookbus.ProvidedResponse) {
	t.s.trace(iter, EventHook, "pre_llm_call_can_provide_response: %s answered instead of the model, which was not called", p.Plugin)
}

func (t *tracer) Reissuing(iter int, r *hookbus.ReissueRequest, req hooks.ModelRequest, fields []string) {
	t.s.trace(iter, EventReissue, "post_llm_call_can_reissue: %s asked to reissue to %s (%s; changed %v)", r.Plugin, req.Model, r.Reason, fields)
}

func (t *tracer) ReissueFailed(iter int, _ *hookbus.ReissueRequest, err error) {
	t.s.trace(iter, EventReissue, "reissue failed (%v); keeping the first answer", err)
}

func (t *tracer) OutputTransformed(iter int, by []string) {
	for _, p := range by {
		t.s.trace(iter, EventHook, "transform_llm_output: %s rewrote the answer", p)
	}
}

func summarize(m hooks.Message) string {
	if len(m.ToolCalls) > 0 {
		s := "calls"
		for i, c := range m.ToolCalls {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(" %s(%s)", c.Name, c.Arguments)
		}
		return s
	}
	return fmt.Sprintf("answers %q", clip(m.Content, 80))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func (t *tracer) ToolCalled(iter int, out dispatch.Outcome) {
	for _, p := range out.ModifiedBy {
		t.s.trace(iter, EventHook, "pre_tool_call: %s modified the arguments of %s", p, out.Call.Name)
	}
	var how string
	switch out.Path {
	case dispatch.PathNative:
		how = "native"
	case dispatch.PathProvided:
		how = "provided by " + out.AnsweredBy + " (native dispatch skipped)"
	case dispatch.PathBlocked:
		how = "blocked by " + out.AnsweredBy
	default:
		how = "rejected"
	}
	status := "ok"
	if out.Result.IsError {
		status = "error"
	}
	t.s.trace(iter, EventToolCall, "tool %s(%s) [%s] → %s, %s: %s", out.Call.Name, out.Call.Arguments, out.Origin, how, status, clip(out.Result.Content, 120))
	for _, p := range out.TransformedBy {
		t.s.trace(iter, EventHook, "transform_tool_result: %s rewrote the result of %s", p, out.Call.Name)
	}
	for _, p := range out.ContextBy {
		t.s.trace(iter, EventHook, "post_tool_call_can_add_context: %s added context to the result of %s", p, out.Call.Name)
	}
}
