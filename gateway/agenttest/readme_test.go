package agenttest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestREADMERecipes holds the README's recipes for the agent CLIs equal to
// what TestAgents runs: the same variables, config files and guard entry,
// for hookhost on 127.0.0.1:8080.
func TestREADMERecipes(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	const root = "http://127.0.0.1:8080"
	var want []string
	for _, a := range agents {
		switch a.name {
		case "claude-code":
			for _, kv := range claudeEnv(root, a.model) {
				want = append(want, "export "+kv)
			}
		case "codex":
			want = append(want, fmt.Sprintf(codexConfig, a.model, root+"/v1"))
		case "opencode":
			want = append(want, fmt.Sprintf(opencodeConfig, a.model, a.model, root+"/v1", a.model, a.model))
			for _, kv := range opencodeQuiet {
				want = append(want, " "+kv)
			}
		}
	}
	want = append(want, guardEntry)
	for _, w := range want {
		if !strings.Contains(readme, w) {
			t.Errorf("README.md's agent CLI recipes do not hold, as the tests run it:\n%s", w)
		}
	}
}
