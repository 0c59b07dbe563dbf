package sdk

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/plugins/handshake"
)

type configured struct {
	Base
	got json.RawMessage
}

func (*configured) Info() Info { return Info{Name: "configured"} }

func (c *configured) Configure(_ context.Context, cfg json.RawMessage) error {
	c.got = cfg
	return nil
}

type unconfigurable struct{}

func (unconfigurable) Info() Info { return Info{Name: "plain"} }

// Serve hands the host's Configure call to whatever configureOf returns.
func TestConfigureOf(t *testing.T) {
	c := &configured{}
	f := configureOf(c)
	if f == nil {
		t.Fatal("no configure for a Configurer")
	}
	if err := f(context.Background(), json.RawMessage(`{"state_dir":".kora"}`)); err != nil {
		t.Fatal(err)
	}
	if string(c.got) != `{"state_dir":".kora"}` {
		t.Fatalf("Configure got %q", c.got)
	}
	if configureOf(unconfigurable{}) != nil {
		t.Fatal("a plugin without Configure got one")
	}
	if configureOf(&struct {
		Base
		unconfigurable
	}{}) == nil {
		t.Fatal("Base's Configure not used")
	}
}

func TestDebugModeIgnoredWhenTheHostLaunchedThePlugin(t *testing.T) {
	t.Setenv(debugEnv, "1")
	if !debugMode() {
		t.Fatal("debug mode off with HOOKHOST_PLUGIN_DEBUG=1 and no cookie")
	}
	t.Setenv(handshake.Config.MagicCookieKey, handshake.Config.MagicCookieValue)
	if debugMode() {
		t.Fatal("debug mode on in a plugin the host launched")
	}
}
