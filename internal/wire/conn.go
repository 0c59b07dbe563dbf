package wire

import (
	"context"
	"encoding/json"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// Conn is one plugin process as the host talks to it, whichever protocol
// version go-plugin negotiated: Client for version 1, V2Client for version
// 2. It is safe for concurrent use; every call honours its context.
type Conn interface {
	hookstretch.Stretcher
	hookstretch.ModelStager
	// Version is the protocol version spoken.
	Version() int
	// Describe asks the plugin for its manifest.
	Describe(ctx context.Context) (hooks.Manifest, error)
	// Configure hands the plugin its config table as a JSON object and
	// returns the hooks of its manifest the plugin, as configured, does not
	// serve (see hooks.Unserving).
	Configure(ctx context.Context, configJSON []byte) ([]hooks.Name, error)
	// Handle makes one hook call (see hooks.Plugin).
	Handle(ctx context.Context, hook hooks.Name, req any) (any, error)
	// Apply sets the rules for the calls made from now on.
	Apply(Settings)
	// LateAnswers counts answers that arrived after the host stopped
	// waiting for them and were dropped.
	LateAnswers() uint64
	// Traffic counts the bytes of the messages exchanged so far.
	Traffic() Traffic
	// Close ends what the connection holds open (version 2's stream); the
	// gRPC connection itself belongs to go-plugin.
	Close()
}

// ConfigureFunc receives the host's Configure call on the plugin's side.
type ConfigureFunc func(ctx context.Context, config json.RawMessage) error

var (
	_ Conn = (*Client)(nil)
	_ Conn = (*V2Client)(nil)
)

// Version is 1.
func (c *Client) Version() int { return 1 }

// Stretch answers hookstretch.ErrNoStretch: version 1 has one RPC per hook.
func (c *Client) Stretch(context.Context, hookstretch.Request) (hookstretch.Stretch, error) {
	return nil, hookstretch.ErrNoStretch
}

// ModelStage answers hookstretch.ErrNoStretch: version 1 has one RPC per
// hook.
func (c *Client) ModelStage(context.Context, hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	return nil, hookstretch.ErrNoStretch
}

// LateAnswers is always 0: gRPC drops a unary answer that comes too late.
func (c *Client) LateAnswers() uint64 { return 0 }

// Close does nothing: a version 1 client holds nothing open.
func (c *Client) Close() {}
