package bridge

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// The tools Kora owns. Their names carry the plugin's "kora__" namespace,
// which the host requires of plugin tools.
const (
	ToolOperationalState = "kora__get_operational_state"
	ToolBurn             = "kora__get_burn"
	ToolBudget           = "kora__get_budget"
	ToolRecentInferences = "kora__recent_inferences"
	ToolAuditTail        = "kora__audit_tail"
)

// Prefix is the namespace of Kora's tools.
const Prefix = "kora__"

// Limits of the limit argument of the list tools.
const (
	DefaultLimit = 20
	MaxLimit     = 1000
)

// Windows accepted by kora__get_burn, in the order they are offered.
var Windows = []string{"today", "7d", "all"}

// ToolNames lists every tool Kora owns, in manifest order; it is also the
// default allowlist.
func ToolNames() []string {
	return []string{ToolOperationalState, ToolBurn, ToolBudget, ToolRecentInferences, ToolAuditTail}
}

// The descriptions are what a model chooses by, so they use the words an
// operator would ("burn", "budget", "spent") and keep each tool's words
// distinct from its siblings'; the offline model in particular scores tools
// by word overlap.
const (
	descOperationalState = "Kora operational state: the primary state of the operation, whether claims are permitted, " +
		"today's burn in USD and the budget remaining. Check it before starting costly work."
	descBurn = "Burn report: cost in USD and tokens spent per model and per route, " +
		"from Kora's inference ledger, over a window of today, 7d or all."
	descBudget = "Budget: the daily and total USD limits Kora tracks, " +
		"how much of each is used, and what remains."
	descRecentInferences = "Recent inferences: the latest model calls in Kora's ledger, newest first, with model, route, " +
		"tokens in and out, cost, and whether the call was escalated to the strong model and why."
	descAuditTail = "Audit tail: the latest tool calls in Kora's audit log, newest first, " +
		"with tool name, status, who answered the call and its duration."
)

// noArgs is the arguments of a tool that takes none.
type noArgs struct{}

// burnArgs is kora__get_burn's arguments.
type burnArgs struct {
	Window *string `json:"window" enum:"today,7d,all" default:"today" desc:"Period to total: today (since 00:00 UTC), 7d (the last seven days) or all (everything in the ledger)."`
}

// limitArgs is the arguments of the two list tools. The schema bounds the
// limit, and the SDK reads 20.0 as 20, as models write both.
type limitArgs struct {
	Limit *int `json:"limit" minimum:"1" maximum:"1000" default:"20" desc:"How many entries to return, newest first (1 to 1000)."`
}

// n is the limit asked for, or the default.
func (a limitArgs) n() (int, error) {
	if a.Limit == nil {
		return DefaultLimit, nil
	}
	// The host and the SDK check the bounds already; this keeps the ledger
	// reads bounded whoever calls.
	if *a.Limit < 1 || *a.Limit > MaxLimit {
		return 0, failf(KindBadArguments, "limit must be between 1 and %d, got %d", MaxLimit, *a.Limit)
	}
	return *a.Limit, nil
}

// Tools returns Kora's tools in manifest order, answered by the bridge src
// returns when each call comes.
func Tools(src Source) []sdk.Tool {
	return []sdk.Tool{
		sdk.NewTool(ToolOperationalState, descOperationalState, serve(src, ToolOperationalState,
			func(ctx context.Context, b *Bridge, _ noArgs) (any, error) { return b.operationalState(ctx) })),
		sdk.NewTool(ToolBurn, descBurn, serve(src, ToolBurn,
			func(ctx context.Context, b *Bridge, a burnArgs) (any, error) {
				w := "today"
				if a.Window != nil {
					w = *a.Window
				}
				return b.burn(ctx, w)
			})),
		sdk.NewTool(ToolBudget, descBudget, serve(src, ToolBudget,
			func(ctx context.Context, b *Bridge, _ noArgs) (any, error) { return b.budgetReport(ctx) })),
		sdk.NewTool(ToolRecentInferences, descRecentInferences, serve(src, ToolRecentInferences,
			func(ctx context.Context, b *Bridge, a limitArgs) (any, error) {
				n, err := a.n()
				if err != nil {
					return nil, err
				}
				return b.recentInferences(ctx, n)
			})),
		sdk.NewTool(ToolAuditTail, descAuditTail, serve(src, ToolAuditTail,
			func(ctx context.Context, b *Bridge, a limitArgs) (any, error) {
				n, err := a.n()
				if err != nil {
					return nil, err
				}
				return b.auditTail(ctx, n)
			})),
	}
}

// Specs returns the manifest entries of Kora's tools.
func Specs() []hooks.ToolSpec {
	tools := Tools(func() (*Bridge, error) { return nil, failf(KindNotConfigured, "specs only") })
	specs := make([]hooks.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = t.Spec()
	}
	return specs
}
