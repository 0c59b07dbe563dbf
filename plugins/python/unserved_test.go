package python

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/bustest"
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
				bustest.CheckUnserved(t, bus, on)
			})
		}
	}
}

// TestBrokenUnservedStopsThePluginStarting: an unserved() that answers
// something other than hook names stops the plugin starting, and the host
// says why, as a fault in the plugin rather than in its config.
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
	want := "plugin optional: failed in Configure: unserved() must return hook names (strings), got int 3"
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) || !strings.Contains(errs[0].Error(), "a fault in the plugin") {
		t.Fatalf("start errors %v, want one saying %q, as a fault in the plugin", errs, want)
	}
}
