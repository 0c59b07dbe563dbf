package typescript

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/bustest"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// optionalJS provides a model answer only when its config turns it on
// (its unserved says so); its handler answers whenever it is asked, and
// counts the calls, which preToolCall's block tells: a call that reaches
// the process shows both in the bus's answer and in the plugin's count.
const optionalJS = `#!%s
const { serve } = require(%q);
let on = false;
let asked = 0;
serve({
  name: "optional",
  version: "1.0.0",
  configure(config) { on = config.on; },
  unserved() {
    if (on === "broken") return [3];
    return on ? [] : ["pre_llm_call_can_provide_response"];
  },
  preToolCall(call) { return { block: { message: "optional blocks " + call.name + "; asked to provide " + asked + " times" } }; },
  preLlmCallCanProvideResponse(req) {
    asked++;
    return { model: req.request.model, message: { role: "assistant", content: "here" } };
  },
});
`

func writeOptional(t *testing.T) string {
	t.Helper()
	index := tsbuild.Need(t, "plugins/typescript/dist/src/index.js")
	path := filepath.Join(t.TempDir(), "optional.js")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(optionalJS, tsbuild.Node, index)), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func optionalConfig(t *testing.T, path string, protocol int, on string) *config.Config {
	t.Helper()
	toml := fmt.Sprintf("[plugins]\nenabled = [\"optional\"]\n[plugins.entries.optional]\npath = %q\nprotocol = %d\n[plugins.entries.optional.config]\non = %s\n", path, protocol, on)
	cfg, err := config.Parse([]byte(toml), "t.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestUnservedHooksNotAskedUnderTheHost runs a plugin written with the
// SDK under the real host, over both protocols: a hook its unserved gives
// up as configured is never asked of the process, while its other hook
// is, and with the config that turns the hook on it is asked.
func TestUnservedHooksNotAskedUnderTheHost(t *testing.T) {
	path := writeOptional(t)
	ctx := context.Background()
	for _, protocol := range []int{1, 2} {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("protocol%d/on=%v", protocol, on), func(t *testing.T) {
				h, errs := host.Start(ctx, host.Specs(optionalConfig(t, path, protocol, fmt.Sprint(on))), host.Options{})
				defer func() { _ = h.Close(ctx) }()
				if len(errs) > 0 {
					t.Fatal(errs[0])
				}
				if got := h.Plugins()[0].Protocol; got != protocol {
					t.Fatalf("protocol = %d, want %d", got, protocol)
				}
				bus, err := hookbus.New(h.Members(), hookbus.Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = bus.Close(ctx) }()
				bustest.CheckUnserved(t, bus, on)
			})
		}
	}
}

// TestBrokenUnservedStopsThePluginStarting: an unserved that answers
// something other than hook names stops the plugin starting, and the host
// says why, as a fault in the plugin rather than in its config.
func TestBrokenUnservedStopsThePluginStarting(t *testing.T) {
	path := writeOptional(t)
	ctx := context.Background()
	h, errs := host.Start(ctx, host.Specs(optionalConfig(t, path, 2, `"broken"`)), host.Options{})
	defer func() { _ = h.Close(ctx) }()
	want := "plugin optional: failed in Configure: unserved() must return hook names (strings), got number 3"
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) || !strings.Contains(errs[0].Error(), "a fault in the plugin") {
		t.Fatalf("start errors %v, want one saying %q, as a fault in the plugin", errs, want)
	}
}
