package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestNewChecksListenAndKeys(t *testing.T) {
	env := map[string]string{"KEYS": "k1, k2", "EMPTY": ""}
	for _, tc := range []struct {
		name       string
		listen     string
		override   string
		keyEnv     string
		allowNoKey bool
		wantErr    string // "" means New must succeed
	}{
		{name: "loopback v4 with no key", listen: "127.0.0.1:8080"},
		{name: "loopback 127/8 with no key", listen: "127.3.2.1:8080"},
		{name: "loopback v6 with no key", listen: "[::1]:8080"},
		{name: "localhost with no key", listen: "localhost:8080"},
		{name: "every interface with no key", listen: ":8080", wantErr: "config: server.allow_no_key:"},
		{name: "public address with no key", listen: "0.0.0.0:8080", wantErr: "config: server.allow_no_key:"},
		{name: "public name with no key", listen: "gateway.example:8080", wantErr: "config: server.allow_no_key:"},
		{name: "-listen overrides to a public address", listen: "127.0.0.1:8080", override: "0.0.0.0:9", wantErr: "config: server.allow_no_key:"},
		{name: "public address allowed with no key", listen: "0.0.0.0:8080", allowNoKey: true},
		{name: "public address with a key", listen: "0.0.0.0:8080", keyEnv: "KEYS"},
		{name: "key variable empty", listen: "127.0.0.1:8080", keyEnv: "EMPTY", wantErr: "config: server.api_key_env: the environment variable EMPTY is unset or empty"},
		{name: "key variable unset", listen: "127.0.0.1:8080", keyEnv: "NOPE", wantErr: "config: server.api_key_env: the environment variable NOPE is unset or empty"},
		{name: "no port", listen: "127.0.0.1", wantErr: "config: server.listen:"},
		{name: "bad port", listen: "127.0.0.1:http", wantErr: "config: server.listen:"},
		{name: "port out of range", listen: "127.0.0.1:70000", wantErr: "config: server.listen:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testParts()
			p.server.Listen = tc.listen
			p.listen = tc.override
			p.server.APIKeyEnv = tc.keyEnv
			p.server.AllowNoKey = tc.allowNoKey
			p.getenv = func(k string) string { return env[k] }
			_, err := newServer(p)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("New accepted; want an error starting %q", tc.wantErr)
			case tc.wantErr != "" && !strings.HasPrefix(err.Error(), tc.wantErr):
				t.Fatalf("error %q, want it to start %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "k1") {
				t.Fatalf("error shows a key: %v", err)
			}
		})
	}
}

func TestBadRequestsGetTheProtocolsError(t *testing.T) {
	p := testParts()
	p.server.MaxBodySize = 1000
	s := newTest(t, p)
	for _, path := range []string{"/v1/chat/completions", "/v1/responses", "/v1/messages"} {
		t.Run(path, func(t *testing.T) {
			wantFrontError(t, post(t, s.url, path, `{"model":"m1","messages":[`), 400, path, "invalid_request_error")

			msg := wantFrontError(t, post(t, s.url, path, `{"model":"gpt-nope","messages":[]}`), 404, path, "not_found_error")
			if !strings.Contains(msg, `"gpt-nope"`) || !strings.Contains(msg, "GET /v1/models") || !strings.Contains(msg, "server.models") {
				t.Errorf("unknown model message %q should name the model, GET /v1/models and server.models", msg)
			}

			big := `{"model":"m1","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
			msg = wantFrontError(t, post(t, s.url, path, big), 413, path, "request_too_large")
			if !strings.Contains(msg, "server.max_body_size") {
				t.Errorf("413 message %q should name server.max_body_size", msg)
			}
			// Without a Content-Length, the limit is found while reading.
			req, _ := http.NewRequest(http.MethodPost, s.url+path, struct{ *strings.Reader }{strings.NewReader(big)})
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if req.ContentLength != 0 && req.ContentLength != -1 {
				t.Fatalf("the request has a Content-Length: %d", req.ContentLength)
			}
			wantFrontError(t, resp, 413, path, "request_too_large")

			for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded"} {
				req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(chatBody))
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				wantFrontError(t, resp, 415, path, "invalid_request_error")
			}
			// Parameters of the media type are allowed.
			resp = post(t, s.url, path, chatBody, "Content-Type", "application/json; charset=utf-8")
			if b := readAll(t, resp); resp.StatusCode != 200 {
				t.Fatalf("application/json with a charset: %d %s", resp.StatusCode, b)
			}

			req, _ = http.NewRequest(http.MethodGet, s.url+path, nil)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if allow := resp.Header.Get("Allow"); allow != "POST" {
				t.Errorf("Allow %q", allow)
			}
			wantFrontError(t, resp, 405, path, "invalid_request_error")
		})
	}
	if !strings.Contains(s.logs.String(), "status=413") {
		t.Errorf("no request log line with status=413 in:\n%s", s.logs)
	}
}

func TestUnknownPathInBothShapes(t *testing.T) {
	s := newTest(t, testParts())
	resp := do(t, http.MethodGet, s.url+"/v1/nothing")
	body := readAll(t, resp)
	var oa struct {
		Error struct{ Type, Message string }
	}
	if resp.StatusCode != 404 || json.Unmarshal(body, &oa) != nil || oa.Error.Type != "invalid_request_error" || !strings.Contains(oa.Error.Message, "/v1/nothing") {
		t.Fatalf("OpenAI-shaped 404: %d %s", resp.StatusCode, body)
	}

	resp = do(t, http.MethodGet, s.url+"/nothing", "anthropic-version", "2023-06-01")
	body = readAll(t, resp)
	var an struct {
		Type  string
		Error struct{ Type, Message string }
	}
	if resp.StatusCode != 404 || json.Unmarshal(body, &an) != nil || an.Type != "error" || an.Error.Type != "not_found_error" {
		t.Fatalf("Anthropic-shaped 404: %d %s", resp.StatusCode, body)
	}

	resp = do(t, http.MethodPost, s.url+"/healthz")
	readAll(t, resp)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
		t.Fatalf("POST /healthz: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestModelsInBothShapes(t *testing.T) {
	s := newTest(t, testParts())
	resp := do(t, http.MethodGet, s.url+"/v1/models")
	var oa struct {
		Object string
		Data   []struct {
			ID, Object string
			OwnedBy    string `json:"owned_by"`
			Created    int64
		}
	}
	body := readAll(t, resp)
	if err := json.Unmarshal(body, &oa); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if oa.Object != "list" || len(oa.Data) != 2 || oa.Data[0].ID != "m1" || oa.Data[1].ID != "m2" || oa.Data[0].Object != "model" || oa.Data[0].Created == 0 {
		t.Fatalf("OpenAI list: %s", body)
	}

	resp = do(t, http.MethodGet, s.url+"/v1/models", "anthropic-version", "2023-06-01")
	body = readAll(t, resp)
	var an struct {
		Data []struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		} `json:"data"`
		HasMore *bool  `json:"has_more"`
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
	}
	if err := json.Unmarshal(body, &an); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if len(an.Data) != 2 || an.Data[0].Type != "model" || an.Data[0].ID != "m1" || an.Data[0].DisplayName == "" ||
		an.Data[0].CreatedAt == "" || an.HasMore == nil || *an.HasMore || an.FirstID != "m1" || an.LastID != "m2" {
		t.Fatalf("Anthropic list: %s", body)
	}
}

func TestHealthAndReady(t *testing.T) {
	s := newTest(t, testParts())
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		if b := readAll(t, resp); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}

func TestGatewayRouteAnswers(t *testing.T) {
	s := newTest(t, testParts())
	resp := post(t, s.url, "/v1/messages", chatBody)
	body := readAll(t, resp)
	var out struct{ Front, Model, Text string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Front != "/v1/messages" || out.Text != "hello there" || out.Model != "m1" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}

	streamBody := `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hello there"}]}`
	resp = post(t, s.url, "/v1/chat/completions", streamBody)
	body = readAll(t, resp)
	// The estimate is a quarter of the body's bytes.
	want := "event: start\ndata: {\"input_tokens\":" + fmt.Sprint(len(streamBody)/4) + ",\"model\":\"m1\"}\n\n" +
		"event: text\ndata: \"hello\"\n\n" +
		"event: text\ndata: \" there\"\n\n" +
		"event: finish\ndata: {\"stop\":\"end_turn\",\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}\n\n"
	if resp.StatusCode != 200 || string(body) != want || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q\nwant %q", resp.StatusCode, body, want)
	}
	if !strings.Contains(s.logs.String(), "route=gateway") {
		t.Errorf("no log line with the route:\n%s", s.logs)
	}
}
