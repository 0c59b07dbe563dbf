package mcpgate

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

// A caller's allowlist applies before pre_tool_list_finalized: the plugin
// sees only the tools the key may use, may leave some out, and cannot add
// one back; a caller with no list sees every tool, and one with an empty
// list none.
func TestCallerAllowlistBeforeToolListHook(t *testing.T) {
	var mu sync.Mutex
	var saw [][]string
	filter := &hooks.Funcs{Name: "filter",
		PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			var names []string
			var keep []hooks.ToolSpec
			for _, t := range req.Tools {
				names = append(names, t.Name)
				if t.Name != "github__pulls" {
					keep = append(keep, t)
				}
			}
			mu.Lock()
			saw = append(saw, names)
			mu.Unlock()
			if !slices.Contains(names, "fs__read") {
				keep = append(keep, hooks.ToolSpec{Name: "fs__read"})
			}
			return &hooks.ToolListOverride{Tools: keep}, nil
		}}
	var native []dispatch.Tool
	for _, name := range []string{"fs__read", "github__issues", "github__pulls"} {
		native = append(native, dispatch.Tool{Spec: hooks.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }})
	}
	g, err := NewGateway(nil, GatewayOptions{Bus: newBus(t, filter), Native: native})
	if err != nil {
		t.Fatal(err)
	}
	h := g.HTTPHandler()
	callers := map[string]*Caller{"gh": {Key: "gh", Tools: []string{"github__*"}}, "all": {Key: "all"}, "none": {Key: "none", Tools: []string{}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := callers[r.Header.Get("X-Test-Caller")]; c != nil {
			r = r.WithContext(WithCaller(r.Context(), *c))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	list := func(who string) []string {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: &boundedTransport{base: http.DefaultTransport, headers: http.Header{"X-Test-Caller": {who}}, limit: 1 << 20}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	if got := list("gh"); !slices.Equal(got, []string{"github__issues"}) {
		t.Errorf("key gh lists %q, want only github__issues (github__pulls left out by the plugin, fs__read not the key's)", got)
	}
	if got := list("all"); !slices.Equal(got, []string{"fs__read", "github__issues"}) {
		t.Errorf("key all lists %q", got)
	}
	if got := list("none"); len(got) != 0 {
		t.Errorf("a key with an empty list lists %q, want none", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saw) < 1 || !slices.Equal(saw[0], []string{"github__issues", "github__pulls"}) {
		t.Errorf("the plugin saw %q first, want only key gh's tools", saw)
	}
}
