//go:build unix

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// TestAskCombinesAcrossPluginProcesses runs three decider plugins, in
// priority order a modifier, an asker and a blocker, as real processes
// over each protocol version, and checks the combine rule of
// pre_tool_call: any block wins over an ask, an ask holds the call for the
// approver with every asker's reason, and the call that goes ahead once
// approved runs with every modify applied.
func TestAskCombinesAcrossPluginProcesses(t *testing.T) {
	decider := filepath.Join(filepath.Dir(bins.echo), "decider")
	for _, v := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			mod, ask, block := named("modifier", v), named("asker", v), named("blocker", v)
			var ps []plug
			for _, name := range []string{mod, ask, block} {
				ps = append(ps, plug{name, pinned(entry(linkAs(t, decider, name)), v)})
			}
			h, errs := Start(context.Background(), Specs(configOf(ps...)), fastOptions())
			for _, e := range errs {
				t.Fatalf("unexpected start error: %v", e)
			}
			t.Cleanup(func() { h.Close(context.Background()) })
			wantProtocol(t, h, v)
			var mu sync.Mutex
			var statuses []hooks.CallStatus
			watch := &hooks.Funcs{Name: "watch", PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
				mu.Lock()
				statuses = append(statuses, ev.Status)
				mu.Unlock()
				return nil
			}}
			bus, err := hookbus.New(append(h.Members(), hookbus.Member{Plugin: watch}), hookbus.Config{Logger: testLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer bus.Close(context.Background())

			var asked []string
			answer := true
			pipe := &dispatch.Pipeline{Bus: bus, Approve: func(_ context.Context, c hooks.ToolCall, reason string) (bool, error) {
				asked = append(asked, fmt.Sprintf("%s %s: %s", c.Name, c.Arguments, reason))
				return answer, nil
			}}
			tool := ask + "__stamp"
			run := func(args map[string]string) dispatch.Outcome {
				b, _ := json.Marshal(args)
				return pipe.Run(context.Background(), "s", hooks.ToolCall{ID: "c", Name: tool, Arguments: b})
			}
			askReason := ask + " wants a person to approve " + tool

			// Block > ask > modify.
			out := run(map[string]string{mod: "modify", ask: "ask", block: "block"})
			if out.Path != dispatch.PathBlocked || out.AnsweredBy != block || !strings.Contains(out.Result.Content, block+" blocks "+tool) || len(asked) != 0 {
				t.Errorf("modify, ask and block: %+v, approver asked %q; want blocked by %s and no one asked", out, asked, block)
			}

			// Ask > modify, approved: the call runs with the modify.
			out = run(map[string]string{mod: "modify", ask: "ask"})
			wantArgs := fmt.Sprintf(`{%q:"ask","modified_by_%s":true,%q:"modify"}`, ask, mod, mod)
			if out.Path != dispatch.PathProvided || out.AnsweredBy != ask || !strings.Contains(out.Result.Content, `"modified_by_`+mod+`":true`) {
				t.Errorf("modify and ask, approved: %+v, want %s's stamp of the modified arguments", out, ask)
			}
			if want := tool + " " + wantArgs + ": " + askReason; len(asked) != 1 || asked[0] != want {
				t.Errorf("approver asked %q, want [%q]", asked, want)
			}

			// Denied: blocked, the reason in the result.
			answer, asked = false, nil
			out = run(map[string]string{mod: "modify", ask: "ask"})
			if out.Path != dispatch.PathBlocked || out.Status != hooks.StatusBlocked || !strings.Contains(out.Result.Content, "denied by the user: "+askReason) {
				t.Errorf("modify and ask, denied: %+v, want blocked, denied by the user", out)
			}

			// Two askers: asked once, both reasons in priority order.
			answer, asked = true, nil
			out = run(map[string]string{mod: "ask", ask: "ask"})
			if want := mod + " wants a person to approve " + tool + "; " + askReason; len(asked) != 1 || !strings.HasSuffix(asked[0], ": "+want) || out.Path != dispatch.PathProvided {
				t.Errorf("two askers: %+v, approver asked %q; want one question with %q", out, asked, want)
			}

			// No approver: blocked with the reason.
			pipe.Approve = nil
			out = run(map[string]string{ask: "ask"})
			if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "blocked: approval required: "+askReason) {
				t.Errorf("ask with no approver: %+v, want blocked, approval required", out)
			}

			flush, cancel := context.WithTimeout(context.Background(), livenessTimeout)
			defer cancel()
			if err := bus.Flush(flush); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			want := []hooks.CallStatus{hooks.StatusBlocked, hooks.ProvidedBy(ask), hooks.StatusBlocked, hooks.ProvidedBy(ask), hooks.StatusBlocked}
			if fmt.Sprint(statuses) != fmt.Sprint(want) {
				t.Errorf("post_tool_call saw %v, want %v", statuses, want)
			}
		})
	}
}
