package wire_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
)

// streamAnswerer is a plugin whose pre_tool_call blocks with "stream":
// the lane tests serve it on the Hooks stream, to tell its answers there
// from what the test sends on the lane.
func streamAnswerer(name string) *hooks.Funcs {
	return &hooks.Funcs{Name: name,
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "stream"}}, nil
		},
	}
}

// laneClient connects p on a lane and reads its manifest, as the host
// does.
func laneClient(t *testing.T, p hooks.Plugin) (*wire.V2Client, *conn) {
	t.Helper()
	cn := connect(t, onLane, p, nil)
	c := cn.client.(*wire.V2Client)
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, cn
}

// Many callers share a lane, each reading for the others in turn: plain
// calls and model stages, handlers that answer at once or after a while,
// and callers that give up before their answer comes. Every caller that
// waits gets its own answer, and the stream stays on the lane.
func TestLaneManyCallersTakeTurnsReading(t *testing.T) {
	p := &hooks.Funcs{Name: "busy",
		PreToolCallFunc: func(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if ev.Name == "slow" {
				select {
				case <-time.After(time.Duration(rand.IntN(500)) * time.Microsecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "for " + ev.CallID}}, nil
		},
		PreToolListFinalizedFunc: func(_ context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: ev.SessionID}}}, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			s := "for " + ev.SessionID
			return &hooks.RequestPatch{System: &s}, nil
		},
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
			return nil, nil
		},
	}
	c, _ := laneClient(t, p)
	if !c.OnLane() {
		// The first call opens the stream on the lane.
		if _, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: "first", Name: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if !c.OnLane() {
		t.Fatal("the stream is not on the lane")
	}

	const callers, rounds = 16, 150
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := range rounds {
				id := fmt.Sprintf("%d-%d", g, i)
				switch i % 4 {
				case 0, 1:
					name := "t"
					if i%4 == 1 {
						name = "slow"
					}
					v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: id, Name: name})
					if d, _ := v.(*hooks.PreToolCallDecision); err != nil || d == nil || d.Block == nil || d.Block.Message != "for "+id {
						t.Errorf("call %s: %#v, %v", id, v, err)
						return
					}
				case 2:
					req := stageRequest(preStage...)
					req.Call.SessionID = id
					st, err := c.ModelStage(t.Context(), req)
					if err != nil {
						t.Errorf("stage %s: %v", id, err)
						return
					}
					a, err := st.Next(t.Context())
					if o, _ := a.(*hooks.ToolListOverride); err != nil || o == nil || o.Tools[0].Name != id {
						t.Errorf("stage %s tool list: %#v, %v", id, a, err)
					}
					a, err = st.Next(t.Context())
					if r, _ := a.(*hooks.RequestPatch); err != nil || r == nil || *r.System != "for "+id {
						t.Errorf("stage %s patch: %#v, %v", id, a, err)
					}
					if a, err = st.Next(t.Context()); err != nil || !isNilAnswer(a) {
						t.Errorf("stage %s provide: %#v, %v", id, a, err)
					}
					st.Close()
				case 3:
					// Gives up, most often before the answer comes.
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(rand.IntN(300))*time.Microsecond)
					v, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{CallID: id, Name: "slow"})
					cancel()
					if err == nil {
						if d, _ := v.(*hooks.PreToolCallDecision); d == nil || d.Block == nil || d.Block.Message != "for "+id {
							t.Errorf("call %s that could give up: %#v", id, v)
							return
						}
					} else if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("call %s that could give up: %v, want its deadline", id, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if !c.OnLane() {
		t.Error("the stream left the lane")
	}
}

// A plugin whose manifest does not say lane gets its calls on the Hooks
// stream, and the host's end of the lane is closed.
func TestLaneNotServedIsClosed(t *testing.T) {
	p := streamAnswerer("nolane")
	cn := connect(t, 2, p, nil)
	c := cn.client.(*wire.V2Client)
	hostEnd, pluginEnd := lanePair(t)
	c.OfferLane(hostEnd)
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: "c", Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if c.OnLane() {
		t.Error("the calls went on a lane the plugin does not serve")
	}
	pluginEnd.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := pluginEnd.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the host's end of the lane is open: read %d, %v", n, err)
	}
}

// What a plugin sends on its lane that breaks the protocol ends the lane
// with a clear error for the calls in flight, and the next call goes on
// the Hooks stream.
func TestLaneGarbageFromPlugin(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes func() []byte
		want  string
	}{
		{"frame over the result limit", func() []byte {
			return binary.BigEndian.AppendUint32(nil, 1<<30)
		}, "max_result_size"},
		{"undecodable message", func() []byte {
			b := binary.BigEndian.AppendUint32(nil, 3)
			return append(b, 0xff, 0xff, 0xff)
		}, "cannot decode"},
		{"lane closed mid-frame", func() []byte {
			return binary.BigEndian.AppendUint32(nil, 100)[:2]
		}, "ended its hook stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := streamAnswerer("bad")
			// The plugin's gRPC side is real; its lane is this test's.
			cn := connect(t, 2, p, nil)
			c := cn.client.(*wire.V2Client)
			hostEnd, pluginEnd := lanePair(t)
			c.OfferLane(hostEnd)
			c.Apply(wire.Settings{Plugin: "bad", MaxResultSize: 1 << 20})
			go func() {
				// Read the call, answer garbage, and close.
				buf := make([]byte, 4096)
				if _, err := pluginEnd.Read(buf); err != nil {
					return
				}
				pluginEnd.Write(tc.bytes())
				pluginEnd.Close()
			}()
			_, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: "c", Name: "t"})
			var ce *wire.CallError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `plugin "bad"`) {
				t.Fatalf("got %v, want a CallError of plugin \"bad\" saying %q", err, tc.want)
			}
			v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: "c2", Name: "t"})
			if d, _ := v.(*hooks.PreToolCallDecision); err != nil || d == nil || d.Block.Message != "stream" {
				t.Fatalf("the call after the lane broke: %#v, %v; want the Hooks stream's answer", v, err)
			}
			if c.OnLane() {
				t.Error("still on the lane")
			}
		})
	}
}

// A plugin that stops reading its lane makes calls time out, as one that
// stops reading its Hooks stream does: none hangs, and closing the client
// ends the send that waits for the plugin to read.
func TestLanePluginThatStopsReading(t *testing.T) {
	p := streamAnswerer("deaf")
	cn := connect(t, 2, p, nil)
	c := cn.client.(*wire.V2Client)
	hostEnd, _ := lanePair(t) // the plugin's end is never read
	c.OfferLane(hostEnd)
	c.Apply(wire.Settings{Plugin: "deaf"})
	big := `"` + strings.Repeat("a", 256<<10) + `"`
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			v, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{CallID: fmt.Sprint(i), Name: "t", Arguments: []byte(big)})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("call %d: %#v, %v; want its deadline", i, v, err)
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{CallID: "small", Name: "t"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a small call after: %v; want its deadline", err)
	}
	c.Close()
	if _, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{CallID: "closed", Name: "t"}); !errors.Is(err, hooks.ErrUnavailable) {
		t.Errorf("a call after Close: %v; want unavailable", err)
	}
}
