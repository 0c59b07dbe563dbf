package relay

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wiretest"
	"github.com/hookhost/hookhost/llm"
)

// stretchCounter passes a plugin through, counting the stretches it
// accepted: how often the host asked it several hooks in one exchange.
type stretchCounter struct {
	hooks.Plugin
	accepted atomic.Int64
}

var _ hookstretch.Stretcher = (*stretchCounter)(nil)

func (c *stretchCounter) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	s, ok := c.Plugin.(hookstretch.Stretcher)
	if !ok {
		return nil, hookstretch.ErrNoStretch
	}
	st, err := s.Stretch(ctx, req)
	if err == nil {
		c.accepted.Add(1)
	}
	return st, err
}

func (c *stretchCounter) HonoursContext() bool { return true }

// A plugin serving pre_tool_call, pre_tool_call_can_provide_result and
// transform_tool_result for a client's tool decides the first two before
// the client sees the call, and transforms what it provided: with the same
// outcome whichever way it is reached, and, over protocol v2, in one
// exchange.
func TestClientToolPreAndProvideInOneToolRun(t *testing.T) {
	for _, way := range wiretest.Ways {
		t.Run(way.Name, func(t *testing.T) {
			var provided atomic.Int64
			weather := &hooks.Funcs{
				Name: "weather", Matchers: []string{"weather"},
				PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					if strings.Contains(string(r.Arguments), "berlin") {
						return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"city":"Berlin"}`)}, nil
					}
					return nil, nil
				},
				PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					if string(r.Arguments) != `{"city":"Berlin"}` {
						return nil, nil
					}
					provided.Add(1)
					return &hooks.ToolResult{Content: "sunny in Berlin"}, nil
				},
				TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
					if ev.Status != hooks.ProvidedBy("weather") {
						return nil, nil
					}
					return &hooks.ToolResult{Content: "checked " + ev.Result.Content}, nil
				},
			}
			counted := &stretchCounter{Plugin: wiretest.Over(t, way, weather)}
			rec := &recorder{}
			bus := newBus(t, counted, rec.observer())
			up := &scripted{steps: []step{
				calls("", 1, 1, tc("c1", "weather", `{"city":"berlin"}`), tc("c2", "weather", `{"city":"Oslo"}`)),
			}}
			r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10), Observe: rec})
			tools := []hooks.ToolSpec{{Name: "weather"}}
			res := runOK(t, r, testFront{llm.ProtocolChat}, userCall("weather?", tools...), nil)
			// Berlin was answered by the plugin; Oslo goes to the client.
			if len(res.ToolCalls) != 1 || string(res.ToolCalls[0].Arguments) != `{"city":"Oslo"}` {
				t.Fatalf("client got %+v, want only the Oslo call", res.ToolCalls)
			}
			if provided.Load() != 1 {
				t.Fatalf("provided %d times", provided.Load())
			}

			up.steps = []step{text("Sunny in Berlin; Oslo is cloudy.", 1, 1)}
			next := userCall("weather?", tools...)
			next.Request.Messages = append(next.Request.Messages,
				hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
				hooks.Message{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "cloudy"})
			runOK(t, r, testFront{llm.ProtocolChat}, next, nil)
			msgs := up.calls()[1].req.Messages
			want, _ := json.Marshal(`checked "sunny in Berlin"`)
			if len(msgs) != 4 || msgs[2].ToolCallID != "c1" || msgs[2].Content != string(want) || msgs[3].Content != "cloudy" {
				t.Fatalf("continuation = %+v", msgs)
			}
			flush(t, bus)
			rec.mu.Lock()
			var statuses []hooks.CallStatus
			for _, o := range rec.outcomes {
				statuses = append(statuses, o.Status)
			}
			tools2 := append([]string(nil), rec.tools...)
			rec.mu.Unlock()
			if want := []hooks.CallStatus{hooks.ProvidedBy("weather"), hooks.StatusOK}; !reflect.DeepEqual(statuses, want) {
				t.Errorf("post_tool_call statuses = %v, want %v", statuses, want)
			}
			if want := []string{"provided", "client"}; !reflect.DeepEqual(tools2, want) {
				t.Errorf("observer tools = %v, want %v", tools2, want)
			}
			if way.Version == 2 && counted.accepted.Load() == 0 {
				t.Error("over protocol v2 the plugin was asked hook by hook, not in one exchange")
			}
			if way.Version != 2 && counted.accepted.Load() != 0 {
				t.Errorf("%d stretches accepted over %s", counted.accepted.Load(), way.Name)
			}
		})
	}
}
