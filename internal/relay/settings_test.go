package relay

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/openai"
)

// anyHook is a plugin that counts every hook it is asked.
func anyHook(n *atomic.Int32) *hooks.Funcs {
	return &hooks.Funcs{
		Name:               "watch",
		OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { n.Add(1); return nil },
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			n.Add(1)
			return nil, nil
		},
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			n.Add(1)
			return nil, nil
		},
	}
}

// Stop sequences the upstream's API lacks would silently let the answer
// run past them: the request is refused, naming stop, before any hook
// fires or anything reaches the upstream.
func TestStopOnAResponsesUpstreamIsRefusedFirst(t *testing.T) {
	fake := fakeapi.New(t)
	up, err := openai.New(openai.Config{BaseURL: fake.URL() + "/v1", API: openai.APIResponses})
	if err != nil {
		t.Fatal(err)
	}
	var fired atomic.Int32
	bus := newBus(t, anyHook(&fired))
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 100)})
	call := userCall("hi")
	call.Request.Stop = []string{"END"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = r.Run(ctx, testFront{proto: "openai-chat"}, call, nil)
	var de *dialect.Error
	if !errors.As(err, &de) || de.Status != 400 || de.Param != "stop" || !strings.Contains(de.Message, "stop cannot be honoured") {
		t.Fatalf("err = %#v, want a 400 naming stop", err)
	}
	flush(t, bus)
	if n := fired.Load(); n != 0 {
		t.Errorf("%d hooks fired before the refusal", n)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

// A seed the upstream's API lacks cannot change what the answer says: the
// request goes ahead without it, the drop logged at DEBUG and counted.
func TestSeedOnAnAnthropicUpstreamIsDropped(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`))
	up, err := anthropic.New(anthropic.Config{BaseURL: fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	rec := &recorder{}
	drops := &dropObserver{recorder: rec, dropped: map[string]int{}}
	r := New(Config{Provider: up, Store: NewStore(time.Minute, 100), Observe: drops,
		Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})})
	call := userCall("hi")
	seed, topP := int64(7), 0.5
	call.Request.Seed, call.Request.TopP, call.Request.Stop, call.Request.User = &seed, &topP, []string{"END"}, "u-1"
	res := runOK(t, r, testFront{proto: "openai-chat"}, call, nil)
	if strings.Join(res.Text, "") != "ok" {
		t.Errorf("Text = %q", res.Text)
	}
	body := string(fake.Requests()[0].Body)
	if strings.Contains(body, `"seed"`) {
		t.Errorf("seed sent to the Messages API: %s", body)
	}
	for _, want := range []string{`"top_p":0.5`, `"stop_sequences":["END"]`, `"metadata":{"user_id":"u-1"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
	if !strings.Contains(logs.String(), "field=seed") {
		t.Errorf("the dropped seed is not logged:\n%s", logs)
	}
	if drops.dropped["/test seed"] != 1 {
		t.Errorf("dropped = %v, want seed counted once", drops.dropped)
	}
}

// dropObserver is the test recorder, told of dropped fields too.
type dropObserver struct {
	*recorder
	mu      sync.Mutex
	dropped map[string]int
}

func (d *dropObserver) FieldDropped(endpoint, field string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropped[endpoint+" "+field]++
}
