package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Record a turn through a real guard process, then replay the guard's
// calls: unchanged, every answer is as recorded (exit 0); against a config
// whose deny list no longer matches, the block is gone (exit 1), and the
// difference is shown.
func TestReplayAgainstTheSameAndAChangedPlugin(t *testing.T) {
	plugins, dir := buildGuard(t), t.TempDir()
	logFile := filepath.Join(dir, "decisions.jsonl")
	recordCfg := writeConfig(t, guardTraceConfig(plugins, logFile, `\.env`))
	code, out, errOut := runCLI(t, "", "chat", "-c", recordCfg, "read the file .env")
	if code != 0 || !strings.Contains(out, "secrets stay out") {
		t.Fatalf("recording chat: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(data), `"plugin":"guard","hook":"pre_tool_call"`) {
		t.Fatalf("the decision log holds no guard call (%v):\n%s", err, data)
	}

	code, out, errOut = runCLI(t, "", "replay", logFile, "-plugin", "guard", "-c", recordCfg)
	if code != 0 || !strings.Contains(out, "all 1 call(s) answered as recorded") {
		t.Fatalf("replay against the same config: exit %d\n%s\n%s", code, out, errOut)
	}

	changedCfg := writeConfig(t, guardTraceConfig(plugins, filepath.Join(dir, "unused.jsonl"), `nothing-matches-this`))
	code, out, errOut = runCLI(t, "", "replay", logFile, "-plugin", "guard", "-c", changedCfg)
	if code != 1 {
		t.Fatalf("replay against a changed deny list: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"differs pre_tool_call request ",
		`recorded: answer {"block":{"message":"blocked by guard: secrets stay out`,
		"now:      nil",
		"1 of 1 call(s) answered differently",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplayRefusesBadInput(t *testing.T) {
	plugins := buildGuard(t)
	dir := t.TempDir()
	cfg := writeConfig(t, guardTraceConfig(plugins, filepath.Join(dir, "d.jsonl"), `\.env`))
	good := `{"time":"2026-01-01T00:00:00Z","request_id":"r1","plugin":"guard","hook":"pre_tool_call","input":{"session_id":"s","call_id":"c","name":"read_file","arguments":{"path":".env"}},"latency_ms":1,"outcome":"nil"}`
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"unreadable line", []string{write("bad.jsonl", good+"\n{not json\n"), "-plugin", "guard", "-c", cfg}, "bad.jsonl:2: not a decision log entry"},
		{"missing file", []string{filepath.Join(dir, "none.jsonl"), "-plugin", "guard", "-c", cfg}, "no such file"},
		{"no call of the plugin", []string{write("other.jsonl", good+"\n"), "-plugin", "audit", "-c", cfg}, `has no call of plugin "audit"`},
		{"plugin not configured", []string{write("kora.jsonl", strings.Replace(good, `"guard"`, `"kora"`, 1)+"\n"), "-plugin", "kora", "-c", cfg}, `plugin "kora" is not in the config`},
		{"no plugin flag", []string{write("g.jsonl", good+"\n"), "-c", cfg}, "-plugin is required"},
		{"two logs", []string{"a.jsonl", "b.jsonl", "-plugin", "guard", "-c", cfg}, "replay takes one decision log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"replay"}, tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.msg) {
				t.Errorf("exit %d, stderr %q, want 2 saying %q (stdout %q)", code, errOut, tt.msg, out)
			}
		})
	}
}

func TestReplayHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "replay", "--help")
	for _, want := range []string{"usage: hookhost replay LOG -plugin NAME", "-plugin name", "Exits 0 when every answer is as recorded, 1 when any differs, 2", "examples:"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("replay --help (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
	if _, out, _ := runCLI(t, "", "--help"); !strings.Contains(out, "hookhost replay LOG -plugin NAME") {
		t.Errorf("hookhost --help does not list replay:\n%s", out)
	}
}
