package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOriginMCPServerRoundTrip(t *testing.T) {
	o := OriginMCP("fs")
	if o != "mcp:fs" {
		t.Fatalf("OriginMCP(fs) = %q, want mcp:fs", o)
	}
	if server, ok := o.MCPServer(); !ok || server != "fs" {
		t.Fatalf("MCPServer() = %q, %v; want fs, true", server, ok)
	}
	for _, other := range []Origin{OriginNative, OriginPlugin, OriginClient, "", "mcp:"} {
		if server, ok := other.MCPServer(); ok {
			t.Errorf("%q.MCPServer() = %q, true; want false", other, server)
		}
	}
}

func TestOriginTravelsInToolPayloads(t *testing.T) {
	b, err := json.Marshal(ToolCallRequest{Name: "fs__read", Origin: OriginMCP("fs")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"origin":"mcp:fs"`) {
		t.Errorf("request JSON %s lacks its origin", b)
	}
	var out ToolCallOutcome
	if err := json.Unmarshal([]byte(`{"name":"x","origin":"client"}`), &out); err != nil {
		t.Fatal(err)
	}
	if out.Origin != OriginClient {
		t.Errorf("outcome origin = %q, want client", out.Origin)
	}
}
