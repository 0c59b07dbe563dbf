package host

import (
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// killLogger is the logger go-plugin gets for one plugin process. When
// the host kills the process on purpose (a start that failed, a Check
// that stops a plugin it already warned of), go-plugin's complaints about
// the kill ("plugin failed to exit gracefully", "plugin process exited"
// with "signal: killed") are the host's own doing: they are logged at
// DEBUG instead of beside the host's own account of the plugin.
type killLogger struct {
	hclog.Logger
	deliberate *atomic.Bool
}

func (l killLogger) Warn(msg string, args ...any) {
	if l.deliberate.Load() && msg == "plugin failed to exit gracefully" {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Warn(msg, args...)
}

func (l killLogger) Error(msg string, args ...any) {
	if l.deliberate.Load() && msg == "plugin process exited" {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}
