package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Requests that net/http refuses before any handler runs get a 4xx in the
// error shape of the endpoint they were sent to, never a 5xx or a plain
// text body an SDK cannot read.
func TestServerLevelErrorsAreInTheProtocolsShape(t *testing.T) {
	s, err := newServer(testParts())
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, s)
	bigHeader := "X-Big: " + strings.Repeat("a", 1<<20+4096) + "\r\n"
	for _, tc := range []struct {
		name, path, head string
		status           int
		anthropic        bool // on a path with no front
		says             string
	}{
		{"transfer encoding", "/v1/chat/completions", "Transfer-Encoding: chunked, identity\r\n", 400, false, "Transfer-Encoding"},
		{"header too large", "/v1/messages", bigHeader, 431, false, "header"},
		{"bad header bytes", "/v1/responses", "X-Bad\x01: 1\r\n", 400, false, "malformed"},
		{"bad header, other path", "/v2/x", "anthropic-version: 2023-06-01\r\nX-Bad\x01: 1\r\n", 400, true, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(20 * time.Second))
			go io.WriteString(conn, "POST "+tc.path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+tc.head+"Content-Length: 2\r\n\r\n{}")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q %s, want %d JSON", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status)
			}
			var e struct {
				Front string `json:"front"`
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Type != "invalid_request_error" {
				t.Fatalf("body %s is not an error in a protocol's shape", body)
			}
			// The endpoints' test fronts mark their errors with the path;
			// other paths get Anthropic's shape when the client says it
			// is an Anthropic one.
			if _, front := s.fronts[tc.path]; front && e.Front != tc.path {
				t.Errorf("body %s: not in the shape of %s", body, tc.path)
			}
			if !tc.anthropic != (e.Type != "error") {
				t.Errorf("body %s: want Anthropic's shape %v", body, tc.anthropic)
			}
			if !strings.Contains(e.Error.Message, tc.says) {
				t.Errorf("message %q does not say %q", e.Error.Message, tc.says)
			}
		})
	}
	// The server still serves ordinary requests on its wrapped listener.
	if a := postAside("http://"+addr, "/v1/chat/completions", chatBody); a.code != http.StatusOK {
		t.Fatalf("an ordinary request got %d %s %v", a.code, a.body, a.err)
	}
}

// With the real fronts, each endpoint's own shape: Anthropic's on
// /v1/messages, OpenAI's on the others.
func TestServerLevelErrorsOnTheRealFronts(t *testing.T) {
	s, err := newServer(realParts())
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, s)
	for path, want := range map[string]string{
		"/v1/messages":         `{"type":"error","error":{"type":"invalid_request_error",`,
		"/v1/chat/completions": `{"error":{"message":`,
		"/v1/responses":        `{"error":{"message":`,
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(string(body), want) {
			t.Errorf("%s: %d %s, want 400 starting %s", path, resp.StatusCode, body, want)
		}
	}
}
