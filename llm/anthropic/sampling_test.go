package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

func ptr[T any](v T) *T { return &v }

func settingsReq() llm.Request {
	req := userReq("weather?")
	req.TopP, req.Seed, req.Stop, req.User = ptr(0.25), ptr(int64(7)), []string{"END"}, "user-1"
	return req
}

func TestSendsSamplingSettings(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := fakeapi.New(t, jsonReply(200, msgText))
		if stream {
			f = fakeapi.New(t, sseReply(textStream...))
		}
		temp := 0.5
		p := newProvider(t, f, anthropic.Config{APIKey: testKey, Temperature: &temp})
		var err error
		if stream {
			_, err = p.Stream(context.Background(), settingsReq(), nil)
		} else {
			_, err = p.Complete(context.Background(), settingsReq())
		}
		if err != nil {
			t.Fatal(err)
		}
		got, body := sent(t, f, 0)
		// top_p goes beside temperature, as asked: a model that refuses
		// the pair says so itself.
		for key, want := range map[string]string{"top_p": `0.25`, "temperature": `0.5`, "stop_sequences": `["END"]`, "metadata": `{"user_id":"user-1"}`} {
			if string(got[key]) != want {
				t.Errorf("stream=%v: %s = %s, want %s\n%s", stream, key, got[key], want, body)
			}
		}
		if _, ok := got["seed"]; ok {
			t.Errorf("the Messages API has no seed, yet it was sent: %s", body)
		}
	}
	p := newProvider(t, fakeapi.New(t), anthropic.Config{})
	refused, dropped := p.Unsupported(settingsReq())
	if refused != nil || !reflect.DeepEqual(dropped, []string{"seed"}) {
		t.Errorf("Unsupported = %v, %v; want seed dropped, nothing refused", refused, dropped)
	}
}

func TestForwardSendsEachSettingOnce(t *testing.T) {
	clientFields := map[string]string{
		"top_p":          `0.250`,
		"stop_sequences": `[ "END" ]`,
		"metadata":       `{"user_id": "user-1", "tenant": "t-9"}`,
	}
	pass := func() *upstream.Passthrough {
		p := &upstream.Passthrough{Fields: map[string]json.RawMessage{}}
		for k, v := range clientFields {
			p.Fields[k] = json.RawMessage(v)
		}
		return p
	}
	t.Run("unchanged: the client's bytes", func(t *testing.T) {
		f := fakeapi.New(t, jsonReply(200, fwdText))
		p := newProvider(t, f, anthropic.Config{})
		forward(t, p, settingsReq(), pass(), nil)
		got, body := sent(t, f, 0)
		for k, v := range clientFields {
			if string(got[k]) != v {
				t.Errorf("%s = %s, want the client's %s", k, got[k], v)
			}
			if n := bytes.Count(body, []byte(`"`+k+`":`)); n != 1 {
				t.Errorf("%s sent %d times:\n%s", k, n, body)
			}
		}
	})
	t.Run("changed: the neutral value, other metadata kept", func(t *testing.T) {
		f := fakeapi.New(t, jsonReply(200, fwdText))
		p := newProvider(t, f, anthropic.Config{})
		req := settingsReq()
		req.TopP, req.Stop, req.User = ptr(0.5), []string{"STOP"}, "user-2"
		forward(t, p, req, pass(), nil)
		got, body := sent(t, f, 0)
		for key, want := range map[string]string{"top_p": `0.5`, "stop_sequences": `["STOP"]`, "metadata": `{"user_id":"user-2","tenant":"t-9"}`} {
			if string(got[key]) != want {
				t.Errorf("%s = %s, want %s", key, got[key], want)
			}
			if n := bytes.Count(body, []byte(`"`+key+`":`)); n != 1 {
				t.Errorf("%s sent %d times:\n%s", key, n, body)
			}
		}
	})
	t.Run("absent from the client's fields: the neutral value", func(t *testing.T) {
		f := fakeapi.New(t, sseReply(textStream...))
		p := newProvider(t, f, anthropic.Config{})
		forward(t, p, settingsReq(), nil, func(string) {})
		got, _ := sent(t, f, 0)
		for key, want := range map[string]string{"top_p": `0.25`, "stop_sequences": `["END"]`, "metadata": `{"user_id":"user-1"}`} {
			if string(got[key]) != want {
				t.Errorf("%s = %s, want %s", key, got[key], want)
			}
		}
		if _, ok := got["seed"]; ok {
			t.Error("seed sent to the Messages API")
		}
	})
}

func TestSettingsOutOfRangeAreNeverSent(t *testing.T) {
	for name, req := range map[string]llm.Request{
		"top_p":       func() llm.Request { r := userReq("hi"); r.TopP = ptr(math.NaN()); return r }(),
		"temperature": func() llm.Request { r := userReq("hi"); r.Temperature = ptr(math.Inf(-1)); return r }(),
	} {
		f := fakeapi.New(t)
		p := newProvider(t, f, anthropic.Config{APIKey: testKey})
		if _, err := p.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), name+" is") {
			t.Errorf("%s: Complete err = %v, want one naming %s", name, err, name)
		}
		if _, _, err := p.Forward(context.Background(), req, nil, func(string) {}); err == nil || !strings.Contains(err.Error(), name+" is") {
			t.Errorf("%s: Forward err = %v, want one naming %s", name, err, name)
		}
		if n := len(f.Requests()); n != 0 {
			t.Errorf("%s: %d requests sent", name, n)
		}
	}
}

// Claude Code sends beta-gated body fields with the anthropic-beta header
// that turns them on; the fields alone are refused upstream.
func TestForwardSendsTheClientsFeatureHeadersOnly(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{APIKey: testKey, Headers: map[string]string{"anthropic-beta": "configured-2025-01-01"}})
	pass := &upstream.Passthrough{
		Fields: map[string]json.RawMessage{
			"context_management": json.RawMessage(`{"edits":[{"type":"clear_tool_uses_20250919"}]}`),
			"output_config":      json.RawMessage(`{"effort":"high"}`),
		},
		Header: http.Header{
			"Anthropic-Beta":    {"context-management-2025-06-27,interleaved-thinking-2025-05-14", "configured-2025-01-01"},
			"Anthropic-Version": {"2023-06-01"},
			"X-Api-Key":         {"client-secret"},
			"Authorization":     {"Bearer client-secret"},
			"Cookie":            {"session=client"},
			"Connection":        {"close"},
		},
	}
	forward(t, p, userReq("hi"), pass, nil)
	r := f.Requests()[0]
	if got, want := r.Header.Get("anthropic-beta"), "configured-2025-01-01,context-management-2025-06-27,interleaved-thinking-2025-05-14"; got != want {
		t.Errorf("anthropic-beta = %q, want %q (the configured beta kept, the client's added, none twice)", got, want)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version = %q", got)
	}
	if got := r.Header.Get("x-api-key"); got != testKey {
		t.Errorf("x-api-key = %q, want hookhost's own", got)
	}
	for _, name := range []string{"Authorization", "Cookie"} {
		if v := r.Header.Get(name); v != "" {
			t.Errorf("%s reached the upstream: %q", name, v)
		}
	}
	got, _ := sent(t, f, 0)
	if string(got["context_management"]) != `{"edits":[{"type":"clear_tool_uses_20250919"}]}` {
		t.Errorf("context_management = %s", got["context_management"])
	}
}
