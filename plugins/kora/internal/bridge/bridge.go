// Package bridge answers Kora's tools (kora__get_operational_state,
// kora__get_burn, kora__get_budget, kora__recent_inferences,
// kora__audit_tail) on pre_tool_call_can_provide_result, from the ledger and
// Kora's config.
//
// The bridge answers only tools on its allowlist. Anything else, another
// plugin's tool, a native tool, or a Kora tool the operator left off the
// allowlist, gets no answer (nil), so other plugins and native dispatch run
// as if Kora were not there.
//
// A tool Kora does answer always gets a result: a failure while serving it
// becomes the error result
//
//	{"error": "kora_tool_dispatch_error: <kind>: <message>"}
//
// with IsError set, which a model reads and can recover from. Kinds are the
// Kind constants.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Kind says who or what caused a tool failure.
type Kind string

// Failure kinds reported in kora_tool_dispatch_error results.
const (
	// KindBadArguments: the caller (the model) sent arguments the tool
	// does not accept.
	KindBadArguments Kind = "bad_arguments"
	// KindLedgerUnreadable: the ledger files could not be read (the
	// state directory's permissions or disk).
	KindLedgerUnreadable Kind = "ledger_unreadable"
	// KindNotConfigured: the host has not configured Kora yet.
	KindNotConfigured Kind = "not_configured"
	// KindInternal: a bug in Kora.
	KindInternal Kind = "internal"
)

// ErrorPrefix starts every error a Kora tool reports.
const ErrorPrefix = "kora_tool_dispatch_error"

// Error is a tool failure with its kind.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", ErrorPrefix, e.Kind, e.Msg) }

func failf(kind Kind, format string, a ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// Budget is the spending limit in USD; 0 means no limit.
type Budget struct {
	DailyUSD float64
	TotalUSD float64
}

// Settings is what the bridge needs of Kora's config.
type Settings struct {
	Allowlist []string
	Budget    Budget
	// PrimaryState is the operator-declared state of the operation.
	PrimaryState string
	// ClaimsGranted is the operator's claim permission.
	ClaimsGranted bool
}

// Bridge serves Kora's tools. It is safe for concurrent use.
type Bridge struct {
	ledger   *ledger.Ledger
	settings Settings
	allowed  map[string]bool
	log      hclog.Logger
	// Now is the clock windows and budgets are computed against.
	Now func() time.Time
}

// New returns a bridge reading l under settings.
func New(l *ledger.Ledger, s Settings, log hclog.Logger) *Bridge {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	allowed := map[string]bool{}
	for _, n := range s.Allowlist {
		allowed[n] = true
	}
	return &Bridge{ledger: l, settings: s, allowed: allowed, log: log, Now: time.Now}
}

// Handles reports whether the bridge answers the named tool.
func (b *Bridge) Handles(name string) bool {
	return strings.HasPrefix(name, Prefix) && b.allowed[name]
}

// Provide answers one tool call, or returns nil when the tool is not the
// bridge's to answer.
func (b *Bridge) Provide(ctx context.Context, req hooks.ToolCallRequest) *hooks.ToolResult {
	if !b.Handles(req.Name) {
		return nil
	}
	v, err := b.serve(ctx, req)
	if err != nil {
		return ErrorResult(err)
	}
	content, err := json.Marshal(v)
	if err != nil {
		return ErrorResult(failf(KindInternal, "encode the result of %s: %v", req.Name, err))
	}
	return &hooks.ToolResult{Content: string(content)}
}

// ErrorResult is the result a model sees when a Kora tool fails. A plain
// error (not an *Error) is reported as internal.
func ErrorResult(err error) *hooks.ToolResult {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Kind: KindInternal, Msg: err.Error()}
	}
	content, _ := json.Marshal(map[string]string{"error": e.Error()})
	return &hooks.ToolResult{Content: string(content), IsError: true}
}

// serve runs one tool; a panic becomes an internal error so that one bug
// costs one tool call, not the plugin process.
func (b *Bridge) serve(ctx context.Context, req hooks.ToolCallRequest) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("tool panicked", "tool", req.Name, "panic", p)
			v, err = nil, failf(KindInternal, "%s crashed: %v", req.Name, p)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, failf(KindInternal, "%s: %v", req.Name, err)
	}
	switch req.Name {
	case ToolOperationalState:
		if err := decodeArgs(req.Arguments, &struct{}{}); err != nil {
			return nil, err
		}
		return b.operationalState()
	case ToolBurn:
		var args struct {
			Window *string `json:"window"`
		}
		if err := decodeArgs(req.Arguments, &args); err != nil {
			return nil, err
		}
		w := "today"
		if args.Window != nil {
			w = *args.Window
		}
		return b.burn(w)
	case ToolBudget:
		if err := decodeArgs(req.Arguments, &struct{}{}); err != nil {
			return nil, err
		}
		return b.budget()
	case ToolRecentInferences:
		n, err := limitArg(req.Arguments)
		if err != nil {
			return nil, err
		}
		return b.recentInferences(n)
	case ToolAuditTail:
		n, err := limitArg(req.Arguments)
		if err != nil {
			return nil, err
		}
		return b.auditTail(n)
	}
	// On the allowlist but not a tool this version knows: config
	// validation should have caught it.
	return nil, failf(KindInternal, "no handler for %s", req.Name)
}

// decodeArgs is strict, because a misspelt argument silently ignored would
// give the model an answer to a question it did not ask.
func decodeArgs(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return failf(KindBadArguments, "argument %q must be a %s, got %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
		}
		return failf(KindBadArguments, "arguments are not the expected JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return failf(KindBadArguments, "arguments hold more than one JSON value")
	}
	return nil
}

// jsonKind names a Go type the way the tool's schema does.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return t.String()
}

// limitArg reads the optional limit. It accepts 20.0 as well as 20 because
// models write both.
func limitArg(raw json.RawMessage) (int, error) {
	var args struct {
		Limit *float64 `json:"limit"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return 0, err
	}
	if args.Limit == nil {
		return DefaultLimit, nil
	}
	l := *args.Limit
	if l != float64(int64(l)) {
		return 0, failf(KindBadArguments, "limit must be a whole number, got %v", l)
	}
	if l < 1 || l > MaxLimit {
		return 0, failf(KindBadArguments, "limit must be between 1 and %d, got %v", MaxLimit, l)
	}
	return int(l), nil
}
