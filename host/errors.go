package host

import "fmt"

// StartError explains why one plugin could not be started: which plugin,
// what went wrong and what the operator can do about it. The host keeps
// running without that plugin.
type StartError struct {
	Plugin string // the name in plugins.enabled
	Reason string // what went wrong, in the operator's terms
	Fix    string // how to fix it; may be empty when there is nothing to suggest
	// Problem names the plugin's mistake when the host could tell what it
	// is: one of the Problem constants, "" otherwise.
	Problem string
	err     error // the underlying error, when there is one
}

// Error formats the problem as "plugin NAME: REASON (fix: FIX)".
func (e *StartError) Error() string {
	if e.Fix == "" {
		return fmt.Sprintf("plugin %s: %s", e.Plugin, e.Reason)
	}
	return fmt.Sprintf("plugin %s: %s (fix: %s)", e.Plugin, e.Reason, e.Fix)
}

// Unwrap returns the underlying error, so callers can still test for
// context.DeadlineExceeded and the like.
func (e *StartError) Unwrap() error { return e.err }

func startErr(name string, cause error, fix, format string, a ...any) *StartError {
	return &StartError{Plugin: name, Reason: fmt.Sprintf(format, a...), Fix: fix, err: cause}
}
