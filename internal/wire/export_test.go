package wire

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// SetRunStretch makes the version 2 server answer stretches with f until
// restore is called.
func SetRunStretch(f func(ctx context.Context, p hooks.Plugin, req hookstretch.Request, emit func(any, error))) (restore func()) {
	old := runStretch
	runStretch = f
	return func() { runStretch = old }
}

// SetMaxInFlight bounds the calls one version 2 stream runs at once until
// restore is called.
func SetMaxInFlight(n int) (restore func()) {
	old := maxInFlight
	maxInFlight = n
	return func() { maxInFlight = old }
}
