package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hookhost/hookhost/hooks"
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
	emptySchema = `{"type": "object", "properties": {}, "additionalProperties": false}`
	burnSchema  = `{
		"type": "object",
		"properties": {
			"window": {
				"type": "string",
				"enum": ["today", "7d", "all"],
				"default": "today",
				"description": "Period to total: today (since 00:00 UTC), 7d (the last seven days) or all (everything in the ledger)."
			}
		},
		"additionalProperties": false
	}`
	limitSchema = `{
		"type": "object",
		"properties": {
			"limit": {
				"type": "integer",
				"minimum": 1,
				"maximum": 1000,
				"default": 20,
				"description": "How many entries to return, newest first (1 to 1000)."
			}
		},
		"additionalProperties": false
	}`
)

// Specs returns the manifest entries of Kora's tools.
func Specs() []hooks.ToolSpec {
	return []hooks.ToolSpec{
		{
			Name: ToolOperationalState,
			Description: "Kora operational state: the primary state of the operation, whether claims are permitted, " +
				"today's burn in USD and the budget remaining. Check it before starting costly work.",
			InputSchema: compact(emptySchema),
		},
		{
			Name: ToolBurn,
			Description: "Burn report: cost in USD and tokens spent per model and per route, " +
				"from Kora's inference ledger, over a window of today, 7d or all.",
			InputSchema: compact(burnSchema),
		},
		{
			Name: ToolBudget,
			Description: "Budget: the daily and total USD limits Kora tracks, " +
				"how much of each is used, and what remains.",
			InputSchema: compact(emptySchema),
		},
		{
			Name: ToolRecentInferences,
			Description: "Recent inferences: the latest model calls in Kora's ledger, newest first, with model, route, " +
				"tokens in and out, cost, and whether the call was escalated to the strong model and why.",
			InputSchema: compact(limitSchema),
		},
		{
			Name: ToolAuditTail,
			Description: "Audit tail: the latest tool calls in Kora's audit log, newest first, " +
				"with tool name, status, who answered the call and its duration.",
			InputSchema: compact(limitSchema),
		},
	}
}

// compact panics on a malformed literal: that is a programming error the
// package's tests catch.
func compact(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(fmt.Sprintf("kora: malformed schema literal: %v", err))
	}
	return b.Bytes()
}
