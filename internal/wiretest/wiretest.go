// Package wiretest runs an in-process plugin through the real plugin
// protocol over an in-memory gRPC connection, so that rule tests can run
// the same plugin in-process, over protocol version 1 and over version 2
// without starting processes. Tests with real processes live in package
// host.
package wiretest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
)

// Way is one way a test runs a plugin.
type Way struct {
	Name    string // "inprocess", "v1", "v2"
	Version int    // 0: in-process
}

// Ways lists every way a rule test runs its plugins.
var Ways = []Way{{"inprocess", 0}, {"v1", 1}, {"v2", 2}}

// Wire lists the protocol versions only.
var Wire = Ways[1:]

// Over returns p as a host sees it through way: p itself in-process, or a
// hooks.Plugin that calls p through a wire.Conn of that protocol version
// (Handle, Stretch, ModelStage, the manifest from Describe). The connection is closed
// when the test ends.
func Over(t testing.TB, way Way, p hooks.Plugin) hooks.Plugin {
	t.Helper()
	if way.Version == 0 {
		return p
	}
	return &Remote{Conn: Connect(t, way.Version, p, nil)}
}

// Connect serves p with protocol version over an in-memory connection and
// returns the host's side, which knows the plugin by its manifest's name
// (wire.Settings.Plugin) as the host's would.
func Connect(t testing.TB, version int, p hooks.Plugin, configure wire.ConfigureFunc) wire.Conn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(grpc.MaxRecvMsgSize(wire.MaxMessageSize))
	switch version {
	case 1:
		wire.RegisterV1(s, p, configure)
	case 2:
		wire.RegisterV2(s, p, configure)
	default:
		t.Fatalf("wiretest: no protocol version %d", version)
	}
	go func() { _ = s.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///plugin",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var c wire.Conn
	if version == 1 {
		c = wire.NewClient(cc)
	} else {
		c = wire.NewV2Client(cc)
	}
	c.Apply(wire.Settings{Plugin: p.Manifest().Name})
	t.Cleanup(func() {
		c.Close()
		_ = cc.Close()
		s.Stop()
	})
	return c
}

// Remote is a wire.Conn seen as a hooks.Plugin, the way package host
// presents a plugin process to the Bus.
type Remote struct {
	Conn wire.Conn
	// Unserved are the hooks the plugin's Configure said it does not
	// serve; Manifest leaves them out, as the host does.
	Unserved []hooks.Name
	manifest *hooks.Manifest
}

var (
	_ hooks.Plugin             = (*Remote)(nil)
	_ hookstretch.Stretcher    = (*Remote)(nil)
	_ hookstretch.Batcher      = (*Remote)(nil)
	_ hookstretch.ModelStager  = (*Remote)(nil)
	_ hookbus.ContextHonouring = (*Remote)(nil)
)

// Manifest describes the plugin once and returns that manifest ever after.
func (r *Remote) Manifest() hooks.Manifest {
	if r.manifest == nil {
		m, err := r.Conn.Describe(context.Background())
		if err != nil {
			panic("wiretest: describe: " + err.Error())
		}
		r.manifest = &m
	}
	return r.manifest.Without(r.Unserved)
}

// Handle forwards one hook call.
func (r *Remote) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	return r.Conn.Handle(ctx, hook, req)
}

// Stretch forwards a stretch (version 1 answers hookstretch.ErrNoStretch).
func (r *Remote) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	return r.Conn.Stretch(ctx, req)
}

// ObserveBatch forwards an observer batch (a connection that cannot take
// one answers hookstretch.ErrNoBatch).
func (r *Remote) ObserveBatch(ctx context.Context, events []hookstretch.Event, done func(int, error)) error {
	if b, ok := r.Conn.(hookstretch.Batcher); ok {
		return b.ObserveBatch(ctx, events, done)
	}
	return hookstretch.ErrNoBatch
}

// ModelStage forwards a model-side stage (version 1, or a manifest without
// model_stages, answers hookstretch.ErrNoStretch).
func (r *Remote) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	return r.Conn.ModelStage(ctx, req)
}

// HonoursContext reports true, as gRPC enforces deadlines.
func (r *Remote) HonoursContext() bool { return true }
