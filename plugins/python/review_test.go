package python

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/plugins/sdk"
)

// reviewArgs and the Python dataclass below declare the same tool
// arguments in each SDK.
type reviewArgs struct {
	Text  string         `json:"text"`
	Times *int           `json:"times,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Ratio *float64       `json:"ratio,omitempty"`
	Mode  *string        `json:"mode,omitempty" enum:"a,b"`
	Meta  map[string]int `json:"meta,omitempty"`
}

const reviewPy = `
import json, sys
from dataclasses import dataclass
from typing import Dict, List, Literal, Optional
import hookhost_plugin as hp

@dataclass
class A:
    text: str
    times: Optional[int] = None
    tags: Optional[List[str]] = None
    ratio: Optional[float] = None
    mode: Optional[Literal["a", "b"]] = None
    meta: Optional[Dict[str, int]] = None

t = hp.Tool("t", "d", lambda a: {"ok": True}, A)
for raw in json.load(sys.stdin):
    r = t.call(raw)
    print(json.dumps({"content": r.content, "is_error": r.is_error}))
`

// TestReviewToolErrorsWordedAsGo feeds the same raw arguments to a Go
// sdk.NewTool and to the Python SDK's Tool with the same argument type:
// the README promises "the same words, so a model gets the same messages
// from every plugin".
func TestReviewToolErrorsWordedAsGo(t *testing.T) {
	needPython(t)
	inputs := []string{
		`{"text": 3}`,
		`{}`,
		`{"text":"a","times":"3"}`,
		`{"text":"a","times":2.5}`,
		`{"text":"a","times":99999999999999999999}`,
		`{"text":"a","extra":1}`,
		`[1]`,
		`{"text":"a","tags":[1,"b",null]}`,
		`{"text":"a","mode":"c"}`,
		`{"text":"a","meta":{"k":"v","a b":1.5}}`,
		`{"text":"a","ratio":1e400}`,
		`{"text":"a","times":null}`,
		`{"text":"a"} {"text":"b"}`,
		`{"text":`,
		`{"text":"a",}`,
		`{"text":'a'}`,
		`{"text":"a","times":NaN}`,
	}
	tool := sdk.NewTool("t", "d", func(ctx context.Context, a reviewArgs) (any, error) {
		return map[string]bool{"ok": true}, nil
	})
	in, _ := json.Marshal(inputs)
	cmd := exec.Command(python, "-B", "-c", reviewPy)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+abs(t, "src"))
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python answered %d lines for %d inputs:\n%s", len(lines), len(inputs), out)
	}
	for i, raw := range inputs {
		g := tool.Call(context.Background(), json.RawMessage(raw))
		var p struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &p); err != nil {
			t.Fatal(err)
		}
		if g.Content != p.Content || g.IsError != p.IsError {
			t.Errorf("arguments %s:\n  Go:     %s (is_error %v)\n  Python: %s (is_error %v)", raw, g.Content, g.IsError, p.Content, p.IsError)
		}
	}
}
