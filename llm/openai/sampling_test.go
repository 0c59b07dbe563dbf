package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

func ptr[T any](v T) *T { return &v }

// settingsReq is userReq with every sampling and identity setting.
func settingsReq() llm.Request {
	req := userReq("weather?")
	req.TopP, req.Seed, req.Stop, req.User = ptr(0.25), ptr(int64(7)), []string{"END", "\n\n"}, "user-1"
	return req
}

// keyCount is how often body has the top-level-looking key.
func keyCount(body []byte, key string) int {
	return bytes.Count(body, []byte(`"`+key+`":`))
}

func TestChatSendsSamplingSettings(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := newFake(t, jsonReply(200, chatText))
		if stream {
			f = newFake(t, sseReply(chatTextStream...))
		}
		p := newProvider(t, f, openai.Config{APIKey: testKey})
		var err error
		if stream {
			_, err = p.Stream(context.Background(), settingsReq(), nil)
		} else {
			_, err = p.Complete(context.Background(), settingsReq())
		}
		if err != nil {
			t.Fatal(err)
		}
		body := f.Requests()[0].Body
		for key, want := range map[string]string{"top_p": `0.25`, "seed": `7`, "stop": `["END","\n\n"]`, "user": `"user-1"`} {
			if got := string(sentField(t, body, key)); got != want {
				t.Errorf("stream=%v: %s = %s, want %s\n%s", stream, key, got, want, body)
			}
		}
		if refused, dropped := p.Unsupported(settingsReq()); refused != nil || dropped != nil {
			t.Errorf("chat Unsupported = %v, %v; Chat Completions has every setting", refused, dropped)
		}
	}
}

func TestChatLeavesUnsetSettingsOut(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	p := newProvider(t, f, openai.Config{APIKey: testKey})
	if _, err := p.Complete(context.Background(), userReq("weather?")); err != nil {
		t.Fatal(err)
	}
	body := f.Requests()[0].Body
	for _, key := range []string{"top_p", "seed", "stop", "user"} {
		if sentField(t, body, key) != nil {
			t.Errorf("%s sent though the request sets none: %s", key, body)
		}
	}
	// A top_p of 0 is a setting, not an absent one.
	f = newFake(t, jsonReply(200, chatText))
	p = newProvider(t, f, openai.Config{APIKey: testKey})
	req := userReq("weather?")
	req.TopP = ptr(0.0)
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := string(sentField(t, f.Requests()[0].Body, "top_p")); got != "0" {
		t.Errorf("top_p = %q, want 0", got)
	}
}

func TestResponsesSendsTopPAndUserOnly(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := newFake(t, jsonReply(200, respText))
		if stream {
			f = newFake(t, sseReply(respTextStream...))
		}
		p := newProvider(t, f, openai.Config{APIKey: testKey, API: openai.APIResponses})
		var err error
		if stream {
			_, err = p.Stream(context.Background(), settingsReq(), nil)
		} else {
			_, err = p.Complete(context.Background(), settingsReq())
		}
		if err != nil {
			t.Fatal(err)
		}
		body := f.Requests()[0].Body
		if got := string(sentField(t, body, "top_p")); got != "0.25" {
			t.Errorf("top_p = %s, want 0.25", got)
		}
		if got := string(sentField(t, body, "user")); got != `"user-1"` {
			t.Errorf("user = %s, want \"user-1\"", got)
		}
		for _, key := range []string{"seed", "stop"} {
			if sentField(t, body, key) != nil {
				t.Errorf("the Responses API has no %s, yet it was sent: %s", key, body)
			}
		}
	}
	p := newProvider(t, newFake(t), openai.Config{API: openai.APIResponses})
	refused, dropped := p.Unsupported(settingsReq())
	if !reflect.DeepEqual(refused, []string{"stop"}) || !reflect.DeepEqual(dropped, []string{"seed"}) {
		t.Errorf("responses Unsupported = %v, %v; want stop refused (the answer would run past it), seed dropped", refused, dropped)
	}
	if refused, dropped := p.Unsupported(userReq("hi")); refused != nil || dropped != nil {
		t.Errorf("Unsupported of a request without the settings = %v, %v", refused, dropped)
	}
}

func TestForwardChatSendsEachSettingOnce(t *testing.T) {
	// The client's own fields, spaced as it wrote them.
	clientFields := map[string]string{"top_p": `0.250`, "seed": ` 7`, "stop": `"END"`, "user": `"user-1"`}
	pass := func() *upstream.Passthrough {
		p := &upstream.Passthrough{Fields: map[string]json.RawMessage{}}
		for k, v := range clientFields {
			p.Fields[k] = json.RawMessage(v)
		}
		return p
	}
	t.Run("unchanged: the client's bytes", func(t *testing.T) {
		f := newFake(t, jsonReply(200, chatText))
		p := newProvider(t, f, openai.Config{APIKey: testKey})
		req := settingsReq()
		req.Stop = []string{"END"}
		if _, _, err := p.Forward(context.Background(), req, pass(), nil); err != nil {
			t.Fatal(err)
		}
		body := f.Requests()[0].Body
		for k, v := range clientFields {
			if !bytes.Contains(body, []byte(`"`+k+`":`+v)) {
				t.Errorf("%s not sent as the client wrote it (%s):\n%s", k, v, body)
			}
			if n := keyCount(body, k); n != 1 {
				t.Errorf("%s sent %d times:\n%s", k, n, body)
			}
		}
	})
	t.Run("changed: the neutral value in place of the client's", func(t *testing.T) {
		f := newFake(t, jsonReply(200, chatText))
		p := newProvider(t, f, openai.Config{APIKey: testKey})
		req := settingsReq()
		req.TopP, req.Seed, req.Stop, req.User = ptr(0.5), ptr(int64(8)), []string{"STOP"}, "user-2"
		if _, _, err := p.Forward(context.Background(), req, pass(), nil); err != nil {
			t.Fatal(err)
		}
		body := f.Requests()[0].Body
		for key, want := range map[string]string{"top_p": `0.5`, "seed": `8`, "stop": `["STOP"]`, "user": `"user-2"`} {
			if got := string(sentField(t, body, key)); got != want {
				t.Errorf("%s = %s, want %s", key, got, want)
			}
			if n := keyCount(body, key); n != 1 {
				t.Errorf("%s sent %d times:\n%s", key, n, body)
			}
		}
	})
	t.Run("absent from the client's fields: the neutral value", func(t *testing.T) {
		f := newFake(t, sseReply(chatTextStream...))
		p := newProvider(t, f, openai.Config{APIKey: testKey})
		if _, _, err := p.Forward(context.Background(), settingsReq(), &upstream.Passthrough{}, func(string) {}); err != nil {
			t.Fatal(err)
		}
		body := f.Requests()[0].Body
		for key, want := range map[string]string{"top_p": `0.25`, "seed": `7`, "stop": `["END","\n\n"]`, "user": `"user-1"`} {
			if got := string(sentField(t, body, key)); got != want {
				t.Errorf("%s = %s, want %s", key, got, want)
			}
		}
	})
}

func TestForwardResponsesSendsEachSettingOnce(t *testing.T) {
	f := newFake(t, jsonReply(200, respText), jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{APIKey: testKey, API: openai.APIResponses})
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{"top_p": json.RawMessage(`0.250`), "user": json.RawMessage(`"user-1"`)}}
	req := userReq("weather?")
	req.TopP, req.User = ptr(0.25), "user-1"
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	body := f.Requests()[0].Body
	if got := string(sentField(t, body, "top_p")); got != "0.250" {
		t.Errorf("top_p = %s, want the client's 0.250", got)
	}
	if got := string(sentField(t, body, "user")); got != `"user-1"` {
		t.Errorf("user = %s", got)
	}
	req.TopP, req.User = ptr(0.5), "user-2"
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	body = f.Requests()[1].Body
	if got := string(sentField(t, body, "top_p")); got != "0.5" {
		t.Errorf("changed top_p = %s, want 0.5", got)
	}
	if got := string(sentField(t, body, "user")); got != `"user-2"` {
		t.Errorf("changed user = %s, want \"user-2\"", got)
	}
}

func TestSettingsOutOfRangeAreNeverSent(t *testing.T) {
	for _, api := range []string{openai.APIChat, openai.APIResponses} {
		for name, req := range map[string]llm.Request{
			"top_p":       func() llm.Request { r := userReq("hi"); r.TopP = ptr(math.NaN()); return r }(),
			"top_p ":      func() llm.Request { r := userReq("hi"); r.TopP = ptr(1.5); return r }(),
			"temperature": func() llm.Request { r := userReq("hi"); r.Temperature = ptr(math.Inf(1)); return r }(),
		} {
			f := newFake(t)
			p := newProvider(t, f, openai.Config{APIKey: testKey, API: api})
			_, err := p.Complete(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(name)+" is") {
				t.Errorf("%s: %s: err = %v, want one naming %s", api, name, err, name)
			}
			_, _, ferr := p.Forward(context.Background(), req, nil, func(string) {})
			if ferr == nil || !strings.Contains(ferr.Error(), strings.TrimSpace(name)) {
				t.Errorf("%s: %s: Forward err = %v", api, name, ferr)
			}
			if n := len(f.Requests()); n != 0 {
				t.Errorf("%s: %s: %d requests sent", api, name, n)
			}
		}
	}
}

func TestForwardSendsTheClientsBetaHeaderOnly(t *testing.T) {
	for _, api := range []string{openai.APIChat, openai.APIResponses} {
		f := newFake(t, jsonReply(200, map[string]string{openai.APIChat: chatText, openai.APIResponses: respText}[api]))
		p := newProvider(t, f, openai.Config{APIKey: testKey, API: api})
		pass := &upstream.Passthrough{Header: http.Header{
			"Openai-Beta":   {"assistants=v2"},
			"Authorization": {"Bearer client-secret"},
			"Cookie":        {"session=client"},
			"Connection":    {"x-private"},
			"X-Private":     {"1"},
		}}
		if _, _, err := p.Forward(context.Background(), userReq("hi"), pass, nil); err != nil {
			t.Fatal(err)
		}
		h := f.Requests()[0].Header
		if got := h.Get("OpenAI-Beta"); got != "assistants=v2" {
			t.Errorf("%s: openai-beta = %q, want the client's", api, got)
		}
		if got := h.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("%s: authorization = %q, want hookhost's own key", api, got)
		}
		for _, name := range []string{"Cookie", "X-Private"} {
			if h.Get(name) != "" {
				t.Errorf("%s: %s reached the upstream: %q", api, name, h.Get(name))
			}
		}
	}
}
