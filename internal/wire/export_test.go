package wire

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
)

// SetRunStretch makes the version 2 server answer stretches with f until
// restore is called.
func SetRunStretch(f func(ctx context.Context, p hooks.Plugin, req hooks.StretchRequest, emit func(any, error))) (restore func()) {
	old := runStretch
	runStretch = f
	return func() { runStretch = old }
}
