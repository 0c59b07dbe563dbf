package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// TestLongTimeoutUnderTheHost: an entry's timeout may be any positive
// duration (the README says to raise it while debugging); under the real
// host, over both protocols, a call given 720 h (past the 24.8 days a
// single Node timer can wait) must not fail at once. Over protocol 1 the
// deadline travels in gRPC's grpc-timeout header, which @grpc/grpc-js's
// server arms as one timer (see src/grpcfix.ts).
func TestLongTimeoutUnderTheHost(t *testing.T) {
	index := tsbuild.Need(t, "plugins/typescript/dist/src/index.js")
	path := filepath.Join(t.TempDir(), "slow.js")
	src := fmt.Sprintf("#!%s\nconst { serve } = require(%q);\n"+
		`serve({ name: "slow", version: "1.0.0", async preToolCall() { await new Promise((r) => setTimeout(r, 20)); return { block: { message: "no" } }; } });`+"\n", tsbuild.Node, index)
	if err := os.WriteFile(path, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	for protocol, timeout := range map[int]string{1: "720h", 2: "720h"} {
		t.Run(fmt.Sprintf("v%d", protocol), func(t *testing.T) {
			toml := fmt.Sprintf("[plugins]\nenabled = [\"slow\"]\n[plugins.entries.slow]\npath = %q\ntimeout = %q\nprotocol = %d\n", path, timeout, protocol)
			cfg, err := config.Parse([]byte(toml), "t.toml", "")
			if err != nil {
				t.Fatal(err)
			}
			h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
			defer func() { _ = h.Close(context.Background()) }()
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			bus, err := hookbus.New(h.Members(), hookbus.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = bus.Close(context.Background()) }()
			out := bus.PreToolCall(context.Background(), hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "x", Arguments: json.RawMessage(`{}`)})
			if !out.Blocked {
				t.Errorf("pre_tool_call under timeout %s: %+v, want blocked; stats %+v", timeout, out, bus.Stats().Hooks)
			}
		})
	}
}
