package wire_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

var preStage = []hooks.Name{hooks.PreToolListFinalized, hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse}

func stageRequest(hs ...hooks.Name) hookstretch.ModelStageRequest {
	return hookstretch.ModelStageRequest{Stages: stages(hs...),
		Call: hooks.LLMCall{SessionID: "s", Iteration: 1, Route: hooks.RouteGateway,
			Request: hooks.ModelRequest{Model: "m", System: "sys", Tools: []hooks.ToolSpec{{Name: "t1"}}}}}
}

// A plugin served by RegisterV2 says model_stages in its manifest and
// answers a model stage in one call, its own answers carried over; a
// client that has not read that manifest asks hook by hook.
func TestV2ModelStage(t *testing.T) {
	var provideSaw hooks.LLMRequest
	p := &hooks.Funcs{Name: "stager",
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "mine"}}}, nil
		},
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			s := "patched"
			return &hooks.RequestPatch{System: &s}, nil
		},
		PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
			provideSaw = req
			return nil, nil
		},
	}
	c := serveV2(t, p).client
	if _, err := c.ModelStage(t.Context(), stageRequest(preStage...)); !errors.Is(err, hookstretch.ErrNoStretch) {
		t.Fatalf("model stage before Describe: %v, want ErrNoStretch", err)
	}
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err := c.ModelStage(t.Context(), stageRequest(preStage...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := st.Next(t.Context())
	if o, ok := a.(*hooks.ToolListOverride); err != nil || !ok || o.Tools[0].Name != "mine" {
		t.Fatalf("tool list stage: %#v, %v", a, err)
	}
	a, err = st.Next(t.Context())
	if r, ok := a.(*hooks.RequestPatch); err != nil || !ok || *r.System != "patched" {
		t.Fatalf("patch stage: %#v, %v", a, err)
	}
	if a, err = st.Next(t.Context()); err != nil || !isNilAnswer(a) {
		t.Fatalf("provide stage: %#v, %v; want no opinion", a, err)
	}
	if provideSaw.Request.System != "patched" || provideSaw.Request.Tools[0].Name != "mine" {
		t.Errorf("provide stage saw %+v, want the plugin's own tools and patch", provideSaw.Request)
	}
	if _, err := st.Next(t.Context()); err == nil {
		t.Error("Next after the last stage answered")
	}
}

func isNilAnswer(a any) bool {
	switch v := a.(type) {
	case nil:
		return true
	case *hooks.ModelResponse:
		return v == nil
	}
	return false
}

// rawStager is a plugin written against the raw protocol that says
// model_stages; onCall decides what it sends for each call.
type rawStager struct {
	pluginv2.UnimplementedPluginServer
	onCall func(s pluginv2.Plugin_HooksServer, call *pluginv2.HookCall)
}

func (r *rawStager) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return &pluginv1.Manifest{Name: "raw", Version: "1", Hooks: []string{string(hooks.PreAPIRequestMutable), string(hooks.PreLLMCallCanProvideResponse)}, ModelStages: true}, nil
}

func (r *rawStager) Hooks(s pluginv2.Plugin_HooksServer) error {
	for {
		m, err := s.Recv()
		if err != nil {
			return nil
		}
		if c := m.GetCall(); c != nil {
			r.onCall(s, c)
		}
	}
}

// Garbage, an answer for the wrong stage, or a last message where the
// rules go on: the stage's Next says malformed, never hangs, and the
// exchange is over.
func TestV2ModelStageGarbage(t *testing.T) {
	mode := make(chan string, 1)
	r := &rawStager{onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall) {
		var ms pluginv2.ModelStage
		if err := proto.Unmarshal(c.GetPayload(), &ms); err != nil || ms.GetCall().GetRequest().GetModel() != "m" {
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Failure: &pluginv2.Failure{Kind: pluginv2.Failure_BAD_REQUEST}, Last: true})
			return
		}
		empty := answerOf(t, &pluginv1.RequestPatchResponse{})
		switch <-mode {
		case "garbage":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: []byte{0xff, 0xff, 0xff}})
		case "skip":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 1, Answer: empty})
		case "early":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty, Last: true})
		case "provided":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty})
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 1, Answer: answerOf(t, &pluginv1.ModelResponseResponse{
				Response: &pluginv1.ModelResponse{Message: &pluginv1.Message{Role: "assistant", Content: "mine"}}}), Last: true})
		}
	}}
	cn := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, r) })
	c := cn.client
	c.Apply(wire.Settings{Plugin: "raw", MaxResultSize: 64 << 10})
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode    string
		okFirst bool
		want    string
	}{
		{"garbage", false, "undecodable answer"},
		{"skip", false, "answered stage 1 of the call, want stage 0"},
		{"early", true, "ended the stretch after stage 0"},
	} {
		mode <- tc.mode
		st, err := c.ModelStage(t.Context(), stageRequest(hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse))
		if err != nil {
			t.Fatal(err)
		}
		if tc.okFirst {
			if a, err := st.Next(t.Context()); err != nil || a != nil {
				t.Fatalf("%s: first stage (%v, %v)", tc.mode, a, err)
			}
		}
		_, err = st.Next(t.Context())
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: got %v, want malformed: %s", tc.mode, err, tc.want)
		}
		if _, err := st.Next(t.Context()); err == nil {
			t.Fatalf("%s: Next after a malformed stage answered", tc.mode)
		}
		st.Close()
	}

	// A provided response ends the stage: last there is the rule.
	mode <- "provided"
	st, err := c.ModelStage(t.Context(), stageRequest(hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if a, err := st.Next(t.Context()); err != nil || a != nil {
		t.Fatalf("patch stage: %v, %v", a, err)
	}
	if a, err := st.Next(t.Context()); err != nil || a.(*hooks.ModelResponse).Message.Content != "mine" {
		t.Fatalf("provide stage: %#v, %v", a, err)
	}
}

// TryNext gives an answer only once it has come, in order with Next's,
// and none past the stage's last: a stage held by its first hook has
// nothing to give, and once the plugin has answered the stage the rest
// come without waiting.
func TestV2StageTryNextTakesOnlyWhatHasCome(t *testing.T) {
	release := make(chan struct{})
	p := &hooks.Funcs{Name: "stager",
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			<-release
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			s := "patched"
			return &hooks.RequestPatch{System: &s}, nil
		},
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
			return nil, nil
		},
	}
	c := serveV2(t, p).client
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err := c.ModelStage(t.Context(), stageRequest(preStage...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ready, ok := st.(hookstretch.Ready)
	if !ok {
		t.Fatalf("%T does not give answers already received", st)
	}
	if a, got, err := ready.TryNext(); got {
		t.Fatalf("TryNext before the plugin answered: %#v, %v", a, err)
	}
	close(release)
	if a, err := st.Next(t.Context()); err != nil || !isNilAnswer(a) {
		t.Fatalf("tool list stage: %#v, %v; want no opinion", a, err)
	}
	// The rest of the stage follows the first answer at once; wait for it
	// through Next's own path once, if it is slow to come.
	a, got, err := ready.TryNext()
	if !got {
		a, err = st.Next(t.Context())
	}
	if r, ok := a.(*hooks.RequestPatch); err != nil || !ok || *r.System != "patched" {
		t.Fatalf("patch stage: %#v, %v", a, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, got, err := ready.TryNext()
		if got {
			if err != nil || !isNilAnswer(a) {
				t.Fatalf("provide stage: %#v, %v; want no opinion", a, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the provide stage's answer never came to TryNext")
		}
		time.Sleep(time.Millisecond)
	}
	if a, got, err := ready.TryNext(); got {
		t.Fatalf("TryNext past the stage's last answer: %#v, %v", a, err)
	}
	if _, err := st.Next(t.Context()); err == nil {
		t.Error("Next after the last stage answered")
	}
}
