package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway"
)

// A daily budget of $0 is reached before the first call: Kora, the real
// plugin behind hookhost serve, answers every model call itself, whole and
// streamed, and each answer is in the decision log as Kora's answer to
// pre_llm_call_can_provide_response, and in Kora's own log.
func TestKoraDailyBudgetAnswersInsteadOfTheModel(t *testing.T) {
	plugins := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(plugins, "kora"), "../../plugins/kora").CombinedOutput(); err != nil {
		t.Fatalf("building the kora plugin: %v\n%s", err, out)
	}
	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	base, _, out, sigs, done := startServe(t, `[llm]
provider = "offline"
model = "offline-large"
[routing]
gateway = true
[plugins]
enabled = ["kora"]
dir = "`+plugins+`"
[plugins.entries.kora.config]
state_dir = "`+t.TempDir()+`"
budget_usd_per_day = { gateway = 0 }
[trace]
file = "`+logFile+`"
`)
	const want = "Daily budget of $0.00 reached ($0.00 spent today); not calling the model."
	var ids []string
	for _, body := range []string{
		`{"model":"offline-large","messages":[{"role":"user","content":"hello"}]}`,
		`{"model":"offline-large","stream":true,"messages":[{"role":"user","content":"hello again"}]}`,
	} {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want[:40]) {
			t.Fatalf("%s: %d %s, want Kora's budget answer", body, resp.StatusCode, b)
		}
		ids = append(ids, resp.Header.Get(gateway.RequestIDHeader))
	}
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
	byRequest := readLog(t, logFile)
	for _, id := range ids {
		var answered bool
		for _, e := range byRequest[id] {
			answered = answered || (e.Plugin == "kora" && e.Hook == "pre_llm_call_can_provide_response" && strings.Contains(string(e.Answer), want))
		}
		if !answered {
			t.Errorf("the decision log has no answer of kora's to pre_llm_call_can_provide_response under %q: %+v", id, byRequest[id])
		}
	}
	if !strings.Contains(out.String(), "daily budget reached") {
		t.Errorf("Kora's log does not say it answered instead of the model:\n%s", out.String())
	}
}
