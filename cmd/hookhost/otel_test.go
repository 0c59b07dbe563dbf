package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/gateway"
)

// A request through hookhost serve, with OTEL_EXPORTER_OTLP_ENDPOINT set,
// exports its span (named by the response's request id), the model calls
// under it and the guard's decision under the tool call it decided.
func TestServeExportsTheSpansOfARequest(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)

	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	base, _, _, sigs, done := startServe(t, guardTraceConfig(buildGuard(t), logFile, `\.env`))
	const tools = `"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"offline-large",`+tools+`,"messages":[{"role":"user","content":"read the file .env"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "secrets stay out") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get(gateway.RequestIDHeader)
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}

	mu.Lock()
	defer mu.Unlock()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	root := byName["POST /v1/chat/completions"]
	if root == nil {
		t.Fatalf("no request span among %d spans: %v", len(spans), byName)
	}
	rootID := ""
	for _, kv := range root.Attributes {
		if kv.Key == "hookhost.request_id" {
			rootID = kv.Value.GetStringValue()
		}
	}
	if rootID != id {
		t.Errorf("request span names %q, the response %q", rootID, id)
	}
	model, tool, hook := byName["chat offline-large"], byName["execute_tool read_file"], byName["hook pre_tool_call"]
	if model == nil || tool == nil || hook == nil {
		t.Fatalf("spans %v, want a model call, a tool call and a hook call", byName)
	}
	if string(model.ParentSpanId) != string(root.SpanId) || string(tool.ParentSpanId) != string(root.SpanId) || string(hook.ParentSpanId) != string(tool.SpanId) {
		t.Errorf("parents: model→%x tool→%x hook→%x; request %x, tool %x", model.ParentSpanId, tool.ParentSpanId, hook.ParentSpanId, root.SpanId, tool.SpanId)
	}
}
