package codec

import (
	"slices"

	"github.com/hookhost/hookhost/internal/dialect"
)

// OpenAIHeaders are the rows for the request headers the official OpenAI
// SDKs send, the same on Chat Completions and Responses.
var OpenAIHeaders = []dialect.Field{
	{Path: "header: authorization", Handling: dialect.Translated, Note: "the inbound key (server.api_key_env), which also tells tenants apart; never forwarded: the upstream gets hookhost's own key"},
	{Path: "header: openai-organization", Handling: dialect.Hint, Note: "never forwarded: the upstream bills hookhost's own key and its configured headers"},
	{Path: "header: openai-project", Handling: dialect.Hint, Note: "never forwarded: the upstream bills hookhost's own key and its configured headers"},
	{Path: "header: openai-beta", Handling: dialect.Hint, Note: "feature flags for OpenAI's beta body fields: passed on when the upstream speaks this protocol, dropped across"},
	{Path: "header: idempotency-key", Handling: dialect.Hint, Note: "the SDK's retry key; hookhost's own client retries upstream calls itself"},
	{Path: "header: x-stainless-*", Handling: dialect.Hint, Note: "the SDK's language, version, timeout and retry count: telemetry, not forwarded"},
	{Path: "header: user-agent", Handling: dialect.Hint, Note: "not forwarded: the upstream sees hookhost's own"},
}

// Table is a front's field table: its rows in order, which Fields hands
// out, and each row's handling by path, which the decoder follows.
type Table struct {
	rows   []dialect.Field
	byPath map[string]dialect.Handling
}

// NewTable is the table of rows.
func NewTable(rows []dialect.Field) Table {
	return Table{rows: rows, byPath: dialect.ByPath(rows)}
}

// Fields returns a copy of the rows, for a front's Fields.
func (t Table) Fields() []dialect.Field { return slices.Clone(t.rows) }

// Handling is the handling of the row at path, "" when there is none.
func (t Table) Handling(path string) dialect.Handling { return t.byPath[path] }

// IsHint reports whether path is a hint row.
func (t Table) IsHint(path string) bool { return t.byPath[path] == dialect.Hint }
