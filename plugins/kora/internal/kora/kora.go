// Package kora is the Kora plugin: an operator's assistant that owns five
// kora__* tools, keeps a ledger of every inference and tool call, and
// routes low-confidence answers from small models to a strong one.
//
// Lifecycle: the host starts the process, reads Info through Describe, then
// calls Configure once with the [plugins.entries.kora.config] table before
// any hook. Configure validates the table, opens the ledger's database
// (SQLite in state_dir by default; ledger.dsn picks another) and builds the
// bridge; a restarted process goes through the same steps, and the ledger
// it reopens is the one its predecessor left. A database that cannot be
// opened does not stop Kora: it logs why, its tools answer
// kora_tool_dispatch_error: <kind>, and the database is tried again on use.
// From then on hooks may arrive concurrently:
//
//   - pre_tool_call_can_provide_result, for kora__* tools only: the SDK
//     answers them through the bridge's typed tools (package bridge);
//   - pre_llm_call_can_provide_response, only with budget_usd_per_day set
//     (Configure tells the host so; see Unserved): once
//     today's (UTC) spend on the call's route, kept in memory by the
//     writer, is at or past it, Kora answers the call itself with a
//     message saying so, and the model is not called;
//   - post_llm_call_can_reissue, only with router.enabled: the router may
//     ask once for the strong model (package router);
//   - post_llm_call and post_tool_call: every inference (priced) and every
//     tool call is queued for the ledger (package ledger), which a writer
//     goroutine commits in batches (writer.go); the hooks never wait for
//     the database.
//
// A background loop folds closed days' totals hourly and, with
// ledger.keep_days set, prunes detailed records past the horizon after
// Configure and then hourly, until Close.
//
// Kora's tool matchers are per hook: pre_tool_call_can_provide_result is
// asked only for kora__* tools, so a native tool call costs no synchronous
// call to Kora, while post_tool_call keeps no matchers, because the audit
// has to see every tool call, not just Kora's own.
package kora

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/router"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// Name is the plugin's name, which the host requires to match its entry in
// plugins.enabled and which prefixes its tools.
const Name = "kora"

// Version is reported in the manifest.
const Version = "0.1.0"

// Plugin is Kora. The zero value is not usable; call New.
type Plugin struct {
	sdk.Base
	st atomic.Pointer[state] // nil until Configure succeeds

	// Tests set these before Configure: now replaces the clock of the
	// ledger, the bridge and retention; afterPrune sees each retention pass.
	now        func() time.Time
	afterPrune func(ledger.PruneStats, error)
}

// state is everything Configure builds; it is replaced whole, never
// mutated, so hooks read it without locks.
type state struct {
	cfg    Config
	ledger *lazyStore
	// writer queues the observers' records and commits them in batches.
	writer *writer
	bridge *bridge.Bridge
	// stopPruning ends the retention loop; nil without retention.
	stopPruning func()
	// stopOpening ends an open carried on in the background; nil when
	// Configure's own open finished.
	stopOpening func()
}

// close writes what is queued, stops what s started and closes its
// database.
func (s *state) close() error {
	werr := s.writer.Close()
	if s.stopOpening != nil {
		s.stopOpening()
	}
	if s.stopPruning != nil {
		s.stopPruning()
	}
	return errors.Join(werr, s.ledger.Close())
}

// New returns an unconfigured Kora.
func New() *Plugin { return &Plugin{} }

// Interface guards: these decide which hooks the manifest lists.
var (
	_ sdk.Plugin                              = (*Plugin)(nil)
	_ sdk.Configurer                          = (*Plugin)(nil)
	_ sdk.Reissuer                            = (*Plugin)(nil)
	_ sdk.PreLLMCallCanProvideResponseHandler = (*Plugin)(nil)
	_ sdk.Unserving                           = (*Plugin)(nil)
	_ sdk.LLMCallObserver                     = (*Plugin)(nil)
	_ sdk.ToolCallObserver                    = (*Plugin)(nil)
)

// Info is Kora's manifest.
// DecideAfterBytes is how much of a streamed answer the router decides on.
const DecideAfterBytes = 512

func (p *Plugin) Info() sdk.Info {
	return sdk.Info{
		Name: Name, Version: Version,
		Config:       Config{},
		HookMatchers: map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {bridge.Prefix + "*"}},
		// The router's hedge detector reads an answer's opening: a model
		// that is unsure says so first. On a streamed gateway answer the
		// host then holds only this much before the rest streams.
		HookOptions: map[hooks.Name]hooks.HookOptions{hooks.PostLLMCallCanReissue: {DecideAfterBytes: DecideAfterBytes}},
		ToolFuncs:   bridge.Tools(p.configuredBridge),
	}
}

// configuredBridge is the Source of Kora's tools: the bridge Configure built.
func (p *Plugin) configuredBridge() (*bridge.Bridge, error) {
	st := p.st.Load()
	if st == nil {
		return nil, &bridge.Error{Kind: bridge.KindNotConfigured, Msg: errNotConfigured.Error()}
	}
	return st.bridge, nil
}

// Configure validates the config table and opens the ledger. A config
// error fails it; a database that cannot be opened does not (see the
// package documentation).
func (p *Plugin) Configure(ctx context.Context, raw json.RawMessage) error {
	cfg, err := ParseConfig(raw)
	if err != nil {
		return err
	}
	log := p.Logger()
	store := newLazyStore(ledger.Options{
		DSN:         cfg.Ledger.ResolvedDSN(),
		StateDir:    cfg.StateDir,
		Synchronous: cfg.Ledger.Synchronous,
		Now:         p.now,
		Log:         log.Named("ledger"),
	}, log)
	// The host's deadline for Configure covers the whole start; leave it
	// room to spare, since a failed open is not a failed start.
	openCtx, cancel := context.WithTimeout(ctx, openBudget(ctx))
	_, err = store.get(openCtx) // a failure is logged, and retried on use
	slow := err != nil && openCtx.Err() != nil
	cancel()
	w := newWriter(store, log.Named("ledger"), p.now, cfg.BudgetPerDay.Set())
	b := bridge.New(readYourWrites{store, w}, bridge.Settings{
		Allowlist:     cfg.Allowlist,
		Budget:        bridge.Budget{DailyUSD: cfg.Budget.DailyUSD, TotalUSD: cfg.Budget.TotalUSD},
		PrimaryState:  cfg.PrimaryState,
		ClaimsGranted: cfg.ClaimPermission == ClaimGranted,
	}, log.Named("bridge"))
	if p.now != nil {
		b.Now = p.now
	}
	st := &state{cfg: cfg, ledger: store, writer: w, bridge: b}
	if slow {
		// The open outlasted its share of the start, most likely importing
		// a large JSONL ledger. Import commits as it goes: carry on in the
		// background rather than a little at every use.
		st.stopOpening = p.finishOpening(store)
	}
	// Without a horizon the loop still runs, hourly, to fold closed days'
	// totals (see ledger.Store.Prune), which keeps all-time reports fast in
	// a process that runs for weeks.
	st.stopPruning = p.prune(store, cfg.Ledger.KeepDays)
	if old := p.st.Swap(st); old != nil {
		old.close()
	}
	log.Debug("configured", "state_dir", cfg.StateDir, "ledger", store.Describe(), "allowlist", strings.Join(cfg.Allowlist, ","),
		"router", cfg.Router.Enabled, "strong_model", cfg.Router.StrongModel, "keep_days", cfg.Ledger.KeepDays)
	return nil
}

// openBudget is how long Configure waits for the database: half of what is
// left of the host's deadline, at most a minute.
func openBudget(ctx context.Context) time.Duration {
	budget := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	return budget
}

// backgroundOpen bounds an open Configure leaves to finish in the
// background.
const backgroundOpen = 30 * time.Minute

// finishOpening opens store in the background, once, for an open too slow
// for Configure. The returned func stops it and waits.
func (p *Plugin) finishOpening(store *lazyStore) (stop func()) {
	ctx, cancel := context.WithTimeout(context.Background(), backgroundOpen)
	done := make(chan struct{})
	log := p.Logger()
	go func() {
		defer close(done)
		log.Info("ledger: opening the database is taking long (importing JSONL files?); carrying on in the background")
		if _, err := store.open(ctx, true); err == nil {
			log.Info("ledger: database open after a long start")
		}
	}()
	return func() { cancel(); <-done }
}

// pruneEvery is how often retention runs after the first pass.
const pruneEvery = time.Hour

// prune runs retention in the background: once now, then every
// pruneEvery, each pass deleting the details older than keepDays days.
// The returned func stops it and waits for a pass in progress.
func (p *Plugin) prune(store *lazyStore, keepDays int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	log := p.Logger().Named("retention")
	go func() {
		defer close(done)
		tick := time.NewTicker(pruneEvery)
		defer tick.Stop()
		if keepDays == 0 {
			// Open has just folded the closed days; nothing to delete.
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		for {
			now := time.Now
			if p.now != nil {
				now = p.now
			}
			var before time.Time // the zero time deletes nothing
			if keepDays > 0 {
				before = now().Add(-time.Duration(keepDays) * 24 * time.Hour)
			}
			st, err := store.Prune(ctx, before)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Warn("retention: prune failed; retried in an hour", "error", err.Error())
			case keepDays == 0:
				log.Debug("retention: folded closed days' totals (keep_days = 0: no details deleted)")
			default:
				log.Info("retention: pruned details past the horizon (daily totals kept)", "keep_days", keepDays,
					"before", before.UTC().Format(time.RFC3339), "inferences", st.Inferences, "tool_calls", st.ToolCalls)
			}
			if p.afterPrune != nil {
				p.afterPrune(st, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Close writes the records still queued, stops retention and closes the
// ledger's database. The SDK calls it when the host stops Kora.
func (p *Plugin) Close() error {
	if st := p.st.Swap(nil); st != nil {
		return st.close()
	}
	return nil
}

// flushLedger returns once every record the observers queued before it is
// committed, or with the database's error.
func (p *Plugin) flushLedger(ctx context.Context) error {
	st := p.st.Load()
	if st == nil {
		return errNotConfigured
	}
	return st.writer.Flush(ctx)
}

var errNotConfigured = errors.New("kora: not configured yet (the host calls Configure before any hook)")

// PostLLMCallCanReissue asks for the strong model when a small model's
// answer looks low-confidence.
func (p *Plugin) PostLLMCallCanReissue(_ context.Context, call hooks.LLMCall) (*hooks.Reissue, error) {
	st := p.st.Load()
	if st == nil {
		return nil, errNotConfigured
	}
	d := router.Decide(st.cfg.Router, call)
	r := router.Reissue(st.cfg.Router, call, d)
	if r != nil {
		p.Logger().Debug("escalating", "session", call.SessionID, "iteration", call.Iteration,
			"from", call.Response.Model, "to", st.cfg.Router.StrongModel, "reason", d.Reason)
	}
	return r, nil
}

// Unserved leaves out the hooks on a model call's path that Kora's config
// does not use, since each would cost every model call a round trip to
// Kora for nothing: pre_llm_call_can_provide_response without a daily
// budget, post_llm_call_can_reissue with the router off.
func (p *Plugin) Unserved() []hooks.Name {
	st := p.st.Load()
	if st == nil {
		return []hooks.Name{hooks.PreLLMCallCanProvideResponse, hooks.PostLLMCallCanReissue}
	}
	var out []hooks.Name
	if !st.cfg.BudgetPerDay.Set() {
		out = append(out, hooks.PreLLMCallCanProvideResponse)
	}
	if !st.cfg.Router.Enabled {
		out = append(out, hooks.PostLLMCallCanReissue)
	}
	return out
}

// PreLLMCallCanProvideResponse answers a model call itself when the
// call's route has a daily budget (budget_usd_per_day) and today's (UTC)
// spend on it is at or past it. The spend is kept in memory by the
// ledger's writer (see writer.spentToday), so the check reads no database
// but on a day's first call. A spend that cannot be read is an error,
// which the host takes as no opinion: the budget is a guard against
// runaway spend, not a reason to stop serving.
func (p *Plugin) PreLLMCallCanProvideResponse(ctx context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
	st := p.st.Load()
	if st == nil {
		return nil, errNotConfigured
	}
	route := string(req.Route)
	limit, ok := st.cfg.BudgetPerDay.For(route)
	if !ok {
		return nil, nil
	}
	spent, err := st.writer.spentToday(ctx, route)
	if err != nil {
		return nil, fmt.Errorf("kora: reading today's spend for the daily budget: %w", err)
	}
	if spent < limit {
		return nil, nil
	}
	p.Logger().Warn("daily budget reached: answering instead of the model", "route", route,
		"budget_usd_per_day", limit, "spent_today_usd", spent, "session", req.SessionID, "iteration", req.Iteration)
	return &hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, Content: BudgetMessage(limit, spent)}}, nil
}

// BudgetMessage is Kora's answer once the daily budget is reached.
func BudgetMessage(limit, spent float64) string {
	return fmt.Sprintf("Daily budget of $%.2f reached ($%.2f spent today); not calling the model. "+
		"The budget resets at 00:00 UTC; to go on today, raise budget_usd_per_day in [plugins.entries.kora.config].", limit, spent)
}

// PostLLMCall records one inference, priced. The record is queued for the
// ledger's writer: the call returns without waiting for the database.
func (p *Plugin) PostLLMCall(_ context.Context, inf hooks.Inference) error {
	st := p.st.Load()
	if st == nil {
		return errNotConfigured
	}
	price, priced := st.cfg.Prices[inf.Model]
	return st.writer.AppendInference(ledger.Inference{
		SessionID:    inf.SessionID,
		Iteration:    inf.Iteration,
		Model:        inf.Model,
		Route:        string(inf.Route),
		InputTokens:  inf.Usage.InputTokens,
		OutputTokens: inf.Usage.OutputTokens,
		CostUSD:      price.Cost(inf.Usage.InputTokens, inf.Usage.OutputTokens),
		Unpriced:     !priced,
		Escalated:    inf.Escalated,
		Reason:       inf.Reason,
		StopReason:   string(inf.StopReason),
		DurationMS:   ms(inf.Duration.Seconds()),
		Error:        inf.Error,
	})
}

// Limits on what the audit copies from a call, so one huge argument or
// error cannot bloat the ledger or an audit tail a model reads.
const (
	maxAuditArgs  = 2048
	maxAuditError = 300
)

// PostToolCall records one tool call in the audit, queued as PostLLMCall's
// inferences are.
func (p *Plugin) PostToolCall(_ context.Context, out hooks.ToolCallOutcome) error {
	st := p.st.Load()
	if st == nil {
		return errNotConfigured
	}
	rec := ledger.ToolCall{
		SessionID:  out.SessionID,
		CallID:     out.CallID,
		Name:       out.Name,
		Status:     string(out.Status),
		AnsweredBy: answeredBy(out.Status),
		IsError:    out.Result.IsError,
		DurationMS: ms(out.Duration.Seconds()),
	}
	if args := bytes.TrimSpace(out.Arguments); len(args) > 0 && len(args) <= maxAuditArgs && json.Valid(args) {
		rec.Arguments = json.RawMessage(args)
	}
	if out.Result.IsError || out.Status == hooks.StatusError || out.Status == hooks.StatusBlocked {
		rec.Error = clip(errorText(out.Result.Content), maxAuditError)
	}
	return st.writer.AppendToolCall(rec)
}

// answeredBy turns the host's status into who produced the result.
func answeredBy(s hooks.CallStatus) string {
	switch {
	case strings.HasPrefix(string(s), "provided_by:"):
		return strings.TrimPrefix(string(s), "provided_by:")
	case s == hooks.StatusBlocked:
		return "blocked"
	default:
		return "native"
	}
}

// errorText pulls the message out of the {"error": "..."} shape tools use,
// falling back to the raw content.
func errorText(content string) string {
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(content), &body) == nil && body.Error != "" {
		return body.Error
	}
	return strings.TrimSpace(content)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// ms keeps durations readable in the ledger: milliseconds, to the
// microsecond.
func ms(seconds float64) float64 {
	return float64(int64(seconds*1e6+0.5)) / 1e3
}
