package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// stageExchanges counts a plugin's exchanges: plain calls and model stages.
type stageExchanges struct {
	*supervised
	plain, stages atomic.Int64
}

func (e *stageExchanges) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	e.plain.Add(1)
	return e.supervised.Handle(ctx, hook, req)
}

func (e *stageExchanges) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	st, err := e.supervised.ModelStage(ctx, req)
	if err == nil {
		e.stages.Add(1)
	}
	return st, err
}

// Over protocol v2 a plugin's pre-call stage is one exchange. A plugin
// that fails, hangs, answers what the host cannot take or exits in the
// middle of it costs that hook's failure, as a plain call would, and is
// asked its remaining hooks by plain calls with the request as combined
// so far.
func TestModelStageOverV2(t *testing.T) {
	t.Parallel()
	req := hooks.LLMRequest{SessionID: "s", Iteration: 1, Route: hooks.RouteGateway,
		Request: hooks.ModelRequest{Model: "m", System: "sys", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}}
	for _, c := range []struct {
		mutable string
		kind    hookbus.FailureKind
		// provided is the provide hook's answer; "" when it cannot come.
		provided string
		plain    int64
	}{
		{"ok", hookbus.KindNone, "provided: stager from_stager", 0},
		{"fail", hookbus.KindError, "provided: sys from_stager", 1},
		{"malformed", hookbus.KindMalformed, "provided: sys from_stager", 1},
		{"hang", hookbus.KindTimeout, "provided: sys from_stager", 1},
		{"exit", hookbus.KindUnavailable, "", 1},
	} {
		t.Run(c.mutable, func(t *testing.T) {
			t.Parallel()
			name := "stager-" + c.mutable
			e := pinned(entry(linkAs(t, bins.stager, name)), 2)
			if c.mutable == "hang" {
				e.Timeout = 500 * time.Millisecond
			}
			e.Config = json.RawMessage(fmt.Sprintf(`{"mutable": %q}`, c.mutable))
			h := startOK(t, configOf(plug{name, e}), fastOptions())
			wantProtocol(t, h, 2)
			ex := &stageExchanges{supervised: memberOf(t, h, 0)}
			members := h.Members()
			members[0].Plugin = ex
			bus, err := hookbus.New(members, hookbus.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer bus.Close(context.Background())

			out := bus.PreCall(context.Background(), req)
			if out.ToolList == nil || out.Request.Tools[0].Name != "from_stager" {
				t.Errorf("tool list %+v, want the plugin's", out.ToolList)
			}
			got := ""
			if out.Provided != nil {
				got = out.Provided.Response.Message.Content
			}
			if got != c.provided {
				t.Errorf("provided %q, want %q", got, c.provided)
			}
			st := bus.Stats()
			if c.kind != hookbus.KindNone {
				if n := st.Failures(name, hooks.PreAPIRequestMutable, c.kind); n != 1 {
					t.Errorf("pre_api_request_mutable failures %+v, want one %s", st.Hooks, c.kind)
				}
			}
			if ex.stages.Load() != 1 || ex.plain.Load() != c.plain {
				t.Errorf("%d model stages and %d plain calls, want 1 and %d", ex.stages.Load(), ex.plain.Load(), c.plain)
			}
			if st.SyncCalls() != 3 {
				t.Errorf("%d hook calls counted, want 3", st.SyncCalls())
			}
		})
	}
}
