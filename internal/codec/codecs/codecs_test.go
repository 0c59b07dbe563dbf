package codecs_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/codecs"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// protocols reads the llm.Protocol constants from llm/protocol.go, so
// that a protocol named there without a codec fails here.
func protocols(t *testing.T) []llm.Protocol {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "..", "llm", "protocol.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []llm.Protocol
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Protocol" {
			return true
		}
		for _, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, llm.Protocol(s))
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("found no llm.Protocol constants in llm/protocol.go")
	}
	return out
}

// dir is the source directory of c's package.
func dir(c codec.Codec) string {
	pkg := reflect.TypeOf(c).Elem().PkgPath()
	return filepath.Join("..", filepath.Base(pkg))
}

func TestEveryProtocolHasOneCodec(t *testing.T) {
	for _, p := range protocols(t) {
		n := 0
		for _, c := range codecs.All() {
			if c.Protocol() == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("protocol %q has %d codecs in codecs.All, want 1 (see internal/codec's package doc)", p, n)
		}
		if codecs.For(p) == nil {
			t.Errorf("codecs.For(%q) is nil", p)
		}
	}
}

func TestEveryCodecIsComplete(t *testing.T) {
	paths := map[string]bool{}
	fronts := map[string]bool{}
	for _, f := range codecs.Fronts() {
		fronts[f.Path()] = true
	}
	for _, c := range codecs.All() {
		name := filepath.Base(dir(c))
		t.Run(name, func(t *testing.T) {
			if !strings.HasPrefix(c.Path(), "/v1/") || paths[c.Path()] {
				t.Errorf("path %q: want a /v1/ path no other codec serves", c.Path())
			}
			paths[c.Path()] = true
			if !fronts[c.Path()] {
				t.Errorf("path %q is not among codecs.Fronts, which the gateway serves", c.Path())
			}

			if up := c.Upstream(); up.Protocol != c.Protocol() || up.Body == nil || up.ForwardBody == nil ||
				up.Decode == nil || up.DecodeForward == nil || up.Read == nil || up.ReadForward == nil {
				t.Errorf("Upstream: protocol %q (want %q), or a function missing: %+v", up.Protocol, c.Protocol(), up)
			}

			rows := c.Fields()
			if len(rows) == 0 {
				t.Error("Fields: the field table is empty")
			}
			seen := map[string]bool{}
			for _, r := range rows {
				switch r.Handling {
				case dialect.Translated, dialect.Carried, dialect.Mapped, dialect.Hint, dialect.Refused:
				default:
					t.Errorf("Fields: row %q has handling %q", r.Path, r.Handling)
				}
				if seen[r.Path] {
					t.Errorf("Fields: row %q appears twice", r.Path)
				}
				seen[r.Path] = true
			}

			var e *dialect.Error
			if _, err := c.Decode([]byte("not json")); !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Errorf("Decode(not json) = %v, want a 400 *dialect.Error", err)
			}
			body := c.ErrorBody(dialect.Invalid("model", "model: needed"))
			var obj map[string]any
			if json.Unmarshal(body, &obj) != nil || !strings.Contains(string(body), "model: needed") {
				t.Errorf("ErrorBody = %s, want a JSON object holding the message", body)
			}

			call := &dialect.Call{Request: hooks.ModelRequest{Model: "m"}}
			res := &dialect.Result{Model: "m", Text: []string{"hello"}, Stop: hooks.StopEndTurn, Usage: hooks.Usage{InputTokens: 3, OutputTokens: 1}}
			out, err := c.Encode(call, res)
			if err != nil || !json.Valid(out) || !strings.Contains(string(out), "hello") {
				t.Errorf("Encode = %s, %v; want JSON holding the text", out, err)
			}

			rec := httptest.NewRecorder()
			s := c.NewStream(rec, call, dialect.Meta{Model: "m", InputTokens: 3})
			if s.Started() {
				t.Error("NewStream: started before anything was emitted")
			}
			if err := s.Text("hello"); err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(hooks.StopEndTurn, res.Usage); err != nil {
				t.Fatal(err)
			}
			if !s.Started() || !strings.Contains(rec.Body.String(), "hello") {
				t.Errorf("NewStream wrote %q, want the text", rec.Body.String())
			}

			if _, err := c.ResponseWire([]byte("not json")); err == nil {
				t.Error("ResponseWire(not json): no error")
			}
			if got := c.HistoryForm(nil); got != nil {
				t.Errorf("HistoryForm(nil) = %s, want nil", got)
			}
			unit := json.RawMessage(`{"type":"text","text":"hi"}`)
			if got := c.HistoryForm(&upstream.WireResponse{Message: []json.RawMessage{unit}}); len(got) == 0 {
				t.Error("HistoryForm of a one-unit message is empty")
			}

			files, err := os.ReadDir(dir(c))
			if err != nil {
				t.Fatal(err)
			}
			has := map[string]bool{}
			var fuzz, streamcheck bool
			for _, f := range files {
				has[f.Name()] = true
				if !strings.HasSuffix(f.Name(), "_test.go") {
					continue
				}
				src, err := os.ReadFile(filepath.Join(dir(c), f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				fuzz = fuzz || strings.Contains(string(src), "\nfunc Fuzz")
				streamcheck = streamcheck || strings.Contains(string(src), "internal/streamcheck\"")
			}
			for _, want := range []string{"wire.go", "fields.go", "upstream.go", "codec.go"} {
				if !has[want] {
					t.Errorf("the package has no %s (see internal/codec's package doc)", want)
				}
			}
			if !fuzz {
				t.Error("no test file has a Fuzz target for Decode")
			}
			if !streamcheck {
				t.Error("no test file checks the stream with internal/streamcheck")
			}
		})
	}
}

// IDFields merges the codecs' tables by unit type, which is right only as
// long as no two protocols give one type its id in different fields.
func TestIDFieldsDoNotClash(t *testing.T) {
	seen := map[string]string{}
	for _, c := range codecs.All() {
		for typ, key := range c.IDFields().ByType {
			if k, ok := seen[typ]; ok && k != key {
				t.Errorf("unit type %q carries its id in %q for one codec and %q for %s", typ, k, key, c.Protocol())
			}
			seen[typ] = key
		}
	}
	all := codecs.IDFields()
	for typ, key := range map[string]string{"tool_use": "id", "tool_result": "tool_use_id", "function_call": "call_id", "function_call_output": "call_id"} {
		if all.ByType[typ] != key {
			t.Errorf("IDFields().ByType[%q] = %q, want %q", typ, all.ByType[typ], key)
		}
	}
	if len(all.Direct) == 0 || len(all.Calls) == 0 || len(all.Nested) == 0 {
		t.Errorf("IDFields() = %+v: a message object's fields are missing", all)
	}
}
