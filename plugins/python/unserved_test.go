package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
)

// optionalPy provides a model answer only when its config turns it on
// (its unserved() says so); its handler answers whenever it is asked, and
// counts the calls, which pre_tool_call's block tells: a call that reaches
// the process shows both in the bus's answer and in the plugin's count.
const optionalPy = `#!/usr/bin/python3
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

class Optional(hp.Plugin):
    name, version = "optional", "1.0.0"

    def configure(self, config):
        self.on = config.get("on")
        self.asked = 0

    def unserved(self):
        if self.on == "broken":
            return [3]
        return [] if self.on else ["pre_llm_call_can_provide_response"]

    def pre_tool_call(self, call):
        return hp.block("optional blocks %%s; asked to provide %%d times" %% (call.name, self.asked))

    def pre_llm_call_can_provide_response(self, req):
        self.asked += 1
        return hp.ModelResponse(model=req.request.model, message=hp.Message(role="assistant", content="here"))

if __name__ == "__main__":
    hp.serve(Optional())
`

// TestUnservedHooksNotAskedUnderTheHost runs a plugin written with the
// SDK under the real host, over both protocols: a hook its unserved()
// gives up as configured is never asked of the process, while its other
// hook is, and with the config that turns the hook on it is asked.
func TestUnservedHooksNotAskedUnderTheHost(t *testing.T) {
	needPython(t)
	path := filepath.Join(t.TempDir(), "optional.py")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(optionalPy, abs(t, "src"))), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, protocol := range []int{1, 2} {
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("protocol%d/on=%v", protocol, on), func(t *testing.T) {
				log := newLog(t)
				h, bus := start(t, parse(t, fmt.Sprintf(`
[plugins]
enabled = ["optional"]
[plugins.entries.optional]
path = %q
protocol = %d
[plugins.entries.optional.config]
on = %v
`, path, protocol, on)), log)
				if got := h.Plugins()[0].Protocol; got != protocol {
					t.Fatalf("protocol = %d, want %d", got, protocol)
				}
				if got := bus.Subscribed(hooks.PreLLMCallCanProvideResponse, ""); got != on {
					t.Errorf("subscribed to pre_llm_call_can_provide_response: %v, want %v", got, on)
				}
				p := bus.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{SessionID: "s1", Request: hooks.ModelRequest{Model: "m"}})
				if on && (p == nil || p.Plugin != "optional" || p.Response.Message.Content != "here") {
					t.Errorf("pre_llm_call_can_provide_response with the hook on: %+v, want optional's answer", p)
				}
				if !on && p != nil {
					t.Errorf("pre_llm_call_can_provide_response was asked of the plugin, which does not serve it as configured: %+v", p)
				}
				// Asked after the provide call was answered: the count is final.
				asked := 0
				if on {
					asked = 1
				}
				pre := bus.PreToolCall(ctx, hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "x", Arguments: json.RawMessage(`{}`)})
				if want := fmt.Sprintf("optional blocks x; asked to provide %d times", asked); !pre.Blocked || pre.Message != want {
					t.Errorf("pre_tool_call, which the plugin serves: %+v, want the block %q", pre, want)
				}
				if f := failures(bus.Stats()); len(f) != 0 {
					t.Errorf("failures: %v", f)
				}
			})
		}
	}
}

// TestBrokenUnservedStopsThePluginStarting: an unserved() that answers
// something other than hook names makes the plugin refuse its config,
// and the host says why.
func TestBrokenUnservedStopsThePluginStarting(t *testing.T) {
	needPython(t)
	path := filepath.Join(t.TempDir(), "optional.py")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(optionalPy, abs(t, "src"))), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, fmt.Sprintf("[plugins]\nenabled = [\"optional\"]\n[plugins.entries.optional]\npath = %q\n[plugins.entries.optional.config]\non = \"broken\"\n", path))
	log := newLog(t)
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log.logger()})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	want := "plugin optional: rejected its config: unserved() must return hook names (strings), got int 3"
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
		t.Fatalf("start errors %v, want one saying %q", errs, want)
	}
}
