// Package bridge serves Kora's tools (kora__get_operational_state,
// kora__get_burn, kora__get_budget, kora__recent_inferences,
// kora__audit_tail) from the ledger's Store and Kora's config, as typed SDK tools
// (sdk.NewTool): each tool's arguments are a Go struct, from which the SDK
// derives the schema the host checks a call against before Kora is asked,
// and into which the SDK decodes the arguments strictly. An argument the
// tool does not take never reaches the code below: the host answers it
// with its schema error, and the SDK answers one that slipped past the
// host (another host, a test harness) with its own.
//
// A Kora tool always answers. A failure while serving it, a tool the
// operator left off the allowlist included, becomes the error result
//
//	{"error": "kora_tool_dispatch_error: <kind>: <message>"}
//
// with IsError set, which a model reads and can recover from. Kinds are the
// Kind constants; a failure of the ledger's database carries the ledger's
// own kind (ledger_locked, ledger_corrupt, ...).
package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Kind says who or what caused a tool failure.
type Kind string

// Failure kinds reported in kora_tool_dispatch_error results.
const (
	// KindBadArguments: the caller (the model) sent arguments the tool
	// does not accept. The host and the SDK check the schema first, so
	// this is the tools' own defence, for bounds and windows.
	KindBadArguments Kind = "bad_arguments"
	// The ledger's database failed; the kinds are the ledger's (see
	// ledger.ErrorKind for what each means).
	KindLedgerLocked      = Kind(ledger.KindLocked)
	KindLedgerFull        = Kind(ledger.KindFull)
	KindLedgerReadOnly    = Kind(ledger.KindReadOnly)
	KindLedgerCorrupt     = Kind(ledger.KindCorrupt)
	KindLedgerUnavailable = Kind(ledger.KindUnavailable)
	KindLedgerSchema      = Kind(ledger.KindSchema)
	KindLedgerFailed      = Kind(ledger.KindFailed)
	// KindNotConfigured: the host has not configured Kora yet.
	KindNotConfigured Kind = "not_configured"
	// KindNotAllowed: the operator left the tool off Kora's allowlist.
	KindNotAllowed Kind = "not_allowed"
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

// ledgerFailure turns an error of the Store into a tool failure of the
// ledger's kind. The message keeps who failed and doing what, without
// repeating the kind the prefix already gives.
func ledgerFailure(err error) *Error {
	kind := ledger.KindOf(err)
	var le *ledger.Error
	if errors.As(err, &le) {
		return failf(Kind(kind), "kora: ledger (%s): %s: %v", le.Backend, le.Op, le.Err)
	}
	return failf(Kind(kind), "%v", err)
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
	store    ledger.Store
	settings Settings
	allowed  map[string]bool
	log      hclog.Logger
	// Now is the clock windows and budgets are computed against.
	Now func() time.Time
}

// New returns a bridge reporting from store under settings.
func New(store ledger.Store, s Settings, log hclog.Logger) *Bridge {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	allowed := map[string]bool{}
	for _, n := range s.Allowlist {
		allowed[n] = true
	}
	return &Bridge{store: store, settings: s, allowed: allowed, log: log, Now: time.Now}
}

// Allowed reports whether the operator lets Kora answer the named tool.
func (b *Bridge) Allowed(name string) bool { return b.allowed[name] }

// Source returns the bridge Kora's tools answer from, or the *Error saying
// why there is none yet. Tools are declared before Kora is configured, so
// they look their bridge up on every call.
type Source func() (*Bridge, error)

// serve is what every Kora tool does around its own work: it answers from
// the configured bridge, only if the tool is allowed, and turns a panic
// into an internal error, so that one bug costs one tool call, not the
// plugin process, and still reads as a Kora error.
func serve[Args any](src Source, name string, run func(context.Context, *Bridge, Args) (any, error)) func(context.Context, Args) (any, error) {
	return func(ctx context.Context, args Args) (v any, err error) {
		b, err := src()
		if err != nil {
			return nil, err
		}
		if !b.Allowed(name) {
			return nil, failf(KindNotAllowed, "%s is not on Kora's allowlist; the operator can add it to allowlist in [plugins.entries.kora.config]", name)
		}
		defer func() {
			if p := recover(); p != nil {
				b.log.Error("tool panicked", "tool", name, "panic", p)
				v, err = nil, failf(KindInternal, "%s crashed: %v", name, p)
			}
		}()
		if err := ctx.Err(); err != nil {
			return nil, failf(KindInternal, "%s: %v", name, err)
		}
		return run(ctx, b, args)
	}
}
