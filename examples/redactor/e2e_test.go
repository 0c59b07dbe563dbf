package main

// These tests run the real redactor binary under the real host.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

var bin string

func TestMain(m *testing.M) { exampletest.Main(m, "redactor", &bin) }

func TestRealRedactorMasksAFileRead(t *testing.T) {
	cfg := exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["redactor"]
[plugins.entries.redactor]
path = %q
[plugins.entries.redactor.config]
patterns = [{name = "employee_id", regex = '\bEMP-\d{6}\b'}]
`, bin))
	_, bus := exampletest.Start(t, cfg, host.Options{})
	root := t.TempDir()
	env := "OPENAI_API_KEY=" + openAIKey + "\nOWNER=ops@example.com\nID=EMP-123456\nREGION=eu-west-1\n"
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := builtin.All(root)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	p := &dispatch.Pipeline{Registry: reg, Bus: bus}

	out := p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":".env"}`)})
	var file struct{ Content string }
	if err := json.Unmarshal([]byte(out.Result.Content), &file); err != nil {
		t.Fatalf("redacted result is not JSON: %v: %s", err, out.Result.Content)
	}
	want := "OPENAI_API_KEY=[REDACTED:openai_key]\nOWNER=[REDACTED:email]\nID=[REDACTED:employee_id]\nREGION=eu-west-1\n"
	if file.Content != want || len(out.TransformedBy) != 1 || out.TransformedBy[0] != "redactor" {
		t.Errorf("read_file .env: content %q transformed by %v\nwant %q by redactor", file.Content, out.TransformedBy, want)
	}
	if strings.Contains(out.Result.Content, openAIKey) {
		t.Error("the key reached the conversation")
	}

	out = p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c2", Name: "calculate", Arguments: json.RawMessage(`{"expression":"2+2"}`)})
	if len(out.TransformedBy) != 0 {
		t.Errorf("calculate: transformed by %v, want untouched", out.TransformedBy)
	}
}

func TestExampleConfigLoadsAndConfigures(t *testing.T) {
	_, entry := exampletest.Example(t, "example.toml", "redactor")
	h := plugintest.New(t, &redactor{}, plugintest.WithConfig(string(entry.Config)))
	if res, _ := h.TransformToolResult("read_file", `{}`, `{"content":"key `+awsKey+`"}`); strings.Contains(res.Content, awsKey) {
		t.Errorf("example.toml's redactor let an AWS key through: %s", res.Content)
	}
}

// TestREADMEConfigsAreValid checks every config this plugin's README and
// the examples' README show: hookhost must parse it and the plugin accept it.
func TestREADMEConfigsAreValid(t *testing.T) {
	for _, readme := range []string{"README.md", "../README.md"} {
		configs := exampletest.PluginConfigs(exampletest.TOMLBlocks(t, readme), "redactor")
		if len(configs) == 0 && readme == "README.md" {
			t.Errorf("%s shows no [plugins.entries.redactor.config]", readme)
		}
		for _, c := range configs {
			if err := (&redactor{}).Configure(context.Background(), json.RawMessage(c)); err != nil {
				t.Errorf("%s: config %s: %v", readme, c, err)
			}
		}
	}
}
