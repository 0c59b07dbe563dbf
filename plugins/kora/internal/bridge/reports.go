package bridge

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Unlimited is reported in place of an amount when a budget is 0.
const Unlimited = "unlimited"

// Totals is the spend of a set of inferences.
type Totals struct {
	Inferences   int64   `json:"inferences"`
	Escalated    int64   `json:"escalated"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// tally sums groups in the ledger's integer nano-dollars, so the sum is
// exact, and converts to dollars only for the answer.
type tally ledger.Totals

func (t *tally) add(g ledger.Totals) {
	t.Inferences += g.Inferences
	t.Escalated += g.Escalated
	t.InputTokens += g.InputTokens
	t.OutputTokens += g.OutputTokens
	t.CostNanoUSD += g.CostNanoUSD
}

func addTo(m map[string]*tally, key string, g ledger.Totals) {
	if m[key] == nil {
		m[key] = &tally{}
	}
	m[key].add(g)
}

func (t tally) totals() Totals {
	return Totals{
		Inferences: t.Inferences, Escalated: t.Escalated,
		InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		CostUSD: usd(ledger.USD(t.CostNanoUSD)),
	}
}

// Burn is kora__get_burn's result.
type Burn struct {
	Window string `json:"window"`
	// Since is the start of the window; absent for "all".
	Since *time.Time `json:"since,omitempty"`
	Totals
	ByModel map[string]Totals `json:"by_model"`
	ByRoute map[string]Totals `json:"by_route"`
	// UnpricedModels had no price when recorded; their cost counts as 0.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// windowStart returns when a window begins; zero for "all". Days are UTC
// days, so "today" means the same thing to every operator and every host.
func windowStart(window string, now time.Time) (time.Time, error) {
	now = now.UTC()
	switch window {
	case "today":
		return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC), nil
	case "7d":
		return now.Add(-7 * 24 * time.Hour), nil
	case "all":
		return time.Time{}, nil
	}
	return time.Time{}, failf(KindBadArguments, "window must be one of %s; got %q", strings.Join(Windows, ", "), window)
}

func (b *Bridge) burn(ctx context.Context, window string) (*Burn, error) {
	since, err := windowStart(window, b.Now())
	if err != nil {
		return nil, err
	}
	groups, err := b.store.Burn(ctx, since)
	if err != nil {
		return nil, ledgerFailure(err)
	}
	out := &Burn{Window: window, ByModel: map[string]Totals{}, ByRoute: map[string]Totals{}}
	if !since.IsZero() {
		out.Since = &since
	}
	var total tally
	byModel, byRoute := map[string]*tally{}, map[string]*tally{}
	unpriced := map[string]bool{}
	for _, g := range groups {
		total.add(g.Totals)
		route := g.Route
		if route == "" {
			route = "unknown"
		}
		addTo(byModel, g.Model, g.Totals)
		addTo(byRoute, route, g.Totals)
		if g.Unpriced && !unpriced[g.Model] {
			unpriced[g.Model] = true
			out.UnpricedModels = append(out.UnpricedModels, g.Model)
		}
	}
	out.Totals = total.totals()
	for k, v := range byModel {
		out.ByModel[k] = v.totals()
	}
	for k, v := range byRoute {
		out.ByRoute[k] = v.totals()
	}
	slices.Sort(out.UnpricedModels)
	return out, nil
}

// BudgetReport is kora__get_budget's result. Limits and remainders are numbers, or
// "unlimited" when no limit is set.
type BudgetReport struct {
	DailyUSD          any     `json:"daily_usd"`
	SpentTodayUSD     float64 `json:"spent_today_usd"`
	RemainingTodayUSD any     `json:"remaining_today_usd"`
	TotalUSD          any     `json:"total_usd"`
	SpentTotalUSD     float64 `json:"spent_total_usd"`
	RemainingTotalUSD any     `json:"remaining_total_usd"`
	// Status is "within budget", "daily budget exhausted" or "total budget
	// exhausted".
	Status string `json:"status"`

	exhausted bool
}

func (b *Bridge) budgetReport(ctx context.Context) (*BudgetReport, error) {
	today, err := b.burn(ctx, "today")
	if err != nil {
		return nil, err
	}
	all, err := b.burn(ctx, "all")
	if err != nil {
		return nil, err
	}
	lim := b.settings.Budget
	r := &BudgetReport{
		DailyUSD: limit(lim.DailyUSD), SpentTodayUSD: today.CostUSD, RemainingTodayUSD: remaining(lim.DailyUSD, today.CostUSD),
		TotalUSD: limit(lim.TotalUSD), SpentTotalUSD: all.CostUSD, RemainingTotalUSD: remaining(lim.TotalUSD, all.CostUSD),
		Status: "within budget",
	}
	switch {
	case lim.TotalUSD > 0 && all.CostUSD >= lim.TotalUSD:
		r.Status, r.exhausted = "total budget exhausted", true
	case lim.DailyUSD > 0 && today.CostUSD >= lim.DailyUSD:
		r.Status, r.exhausted = "daily budget exhausted", true
	}
	return r, nil
}

func limit(l float64) any {
	if l <= 0 {
		return Unlimited
	}
	return usd(l)
}

func remaining(l, spent float64) any {
	if l <= 0 {
		return Unlimited
	}
	return usd(max(0, l-spent))
}

// OperationalState is kora__get_operational_state's result.
type OperationalState struct {
	// PrimaryState is the configured state, or "over_budget" while a
	// budget is exhausted.
	PrimaryState string `json:"primary_state"`
	// ClaimPermission is "granted" or "denied"; an exhausted budget denies
	// it whatever the config says.
	ClaimPermission       string  `json:"claim_permission"`
	ClaimPermissionReason string  `json:"claim_permission_reason"`
	BurnTodayUSD          float64 `json:"burn_today_usd"`
	BudgetRemainingToday  any     `json:"budget_remaining_today_usd"`
	BudgetRemainingTotal  any     `json:"budget_remaining_total_usd"`
	AsOf                  string  `json:"as_of"`
}

func (b *Bridge) operationalState(ctx context.Context) (*OperationalState, error) {
	br, err := b.budgetReport(ctx)
	if err != nil {
		return nil, err
	}
	s := &OperationalState{
		PrimaryState:         b.settings.PrimaryState,
		ClaimPermission:      "granted",
		BurnTodayUSD:         br.SpentTodayUSD,
		BudgetRemainingToday: br.RemainingTodayUSD,
		BudgetRemainingTotal: br.RemainingTotalUSD,
		AsOf:                 b.Now().UTC().Format(time.RFC3339),
	}
	switch {
	case br.exhausted:
		s.PrimaryState = "over_budget"
		s.ClaimPermission, s.ClaimPermissionReason = "denied", br.Status
	case !b.settings.ClaimsGranted:
		s.ClaimPermission, s.ClaimPermissionReason = "denied", "denied by the operator (claim_permission in Kora's config)"
	default:
		s.ClaimPermissionReason = "granted by the operator and within budget"
	}
	return s, nil
}

// Recent is the result of the two list tools: the newest Count entries of
// Total (every record ever made, retained or rolled up), newest first.
type Recent[T any] struct {
	Count   int   `json:"count"`
	Total   int64 `json:"total"`
	Entries []T   `json:"entries"`
}

// InferenceView is one entry of kora__recent_inferences: the ledger record
// without the fields only an auditor of the host needs, to keep the result
// short enough for a model's context.
type InferenceView struct {
	Time         string  `json:"time"`
	SessionID    string  `json:"session_id,omitempty"`
	Model        string  `json:"model"`
	Route        string  `json:"route"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Escalated    bool    `json:"escalated,omitempty"`
	Reason       string  `json:"reason,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// ToolCallView is one entry of kora__audit_tail.
type ToolCallView struct {
	Time       string          `json:"time"`
	SessionID  string          `json:"session_id,omitempty"`
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	AnsweredBy string          `json:"answered_by"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Error      string          `json:"error,omitempty"`
	DurationMS float64         `json:"duration_ms"`
}

// stamp formats a record's time to the second, which is what a reader of
// a tail needs.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (b *Bridge) recentInferences(ctx context.Context, n int) (*Recent[InferenceView], error) {
	recs, total, err := b.store.RecentInferences(ctx, n)
	if err != nil {
		return nil, ledgerFailure(err)
	}
	views := make([]InferenceView, len(recs))
	for i, r := range recs {
		views[i] = InferenceView{
			Time: stamp(r.Time), SessionID: r.SessionID, Model: r.Model, Route: r.Route,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostUSD: usd(r.CostUSD),
			Escalated: r.Escalated, Reason: r.Reason, Error: r.Error,
		}
	}
	return &Recent[InferenceView]{Count: len(views), Total: total, Entries: views}, nil
}

func (b *Bridge) auditTail(ctx context.Context, n int) (*Recent[ToolCallView], error) {
	recs, total, err := b.store.RecentToolCalls(ctx, n)
	if err != nil {
		return nil, ledgerFailure(err)
	}
	views := make([]ToolCallView, len(recs))
	for i, r := range recs {
		views[i] = ToolCallView{
			Time: stamp(r.Time), SessionID: r.SessionID, Name: r.Name, Status: r.Status,
			AnsweredBy: r.AnsweredBy, Arguments: r.Arguments, Error: r.Error, DurationMS: r.DurationMS,
		}
	}
	return &Recent[ToolCallView]{Count: len(views), Total: total, Entries: views}, nil
}

// usd rounds to a millionth of a dollar, below any price a ledger records,
// so sums do not show float noise such as 0.30000000000000004.
func usd(x float64) float64 { return math.Round(x*1e6) / 1e6 }
