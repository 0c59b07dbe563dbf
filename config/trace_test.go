package config

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestTraceDefaults(t *testing.T) {
	want := Trace{MaxSize: 64 << 20, Keep: 3, Queue: 4096}
	if got := mustParse(t, "").Trace; !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	if got := Default().Trace; !reflect.DeepEqual(got, want) {
		t.Fatalf("Default().Trace = %+v", got)
	}
}

func TestTraceEveryKey(t *testing.T) {
	c := mustParse(t, `
[trace]
file = "logs/decisions.jsonl"
max_size = 1048576
keep = 0
queue = 16
include_content = true
`)
	want := Trace{File: testDir + "/logs/decisions.jsonl", MaxSize: 1 << 20, Keep: 0, Queue: 16, IncludeContent: true}
	if !reflect.DeepEqual(c.Trace, want) {
		t.Fatalf("\n got %+v\nwant %+v", c.Trace, want)
	}
	if w := c.Where("trace.max_size"); w != "hookhost.toml:4" {
		t.Errorf("Where(trace.max_size) = %q", w)
	}
	if got := mustParse(t, "[trace]\nfile = \"/var/log/hookhost/d.jsonl\"\n").Trace.File; got != "/var/log/hookhost/d.jsonl" {
		t.Errorf("an absolute file is kept as written, got %q", got)
	}
	// file = "" switches the log off and may keep its other settings.
	if got := mustParse(t, "[trace]\nfile = \"\"\nkeep = 5\n").Trace; got.File != "" || got.Keep != 5 {
		t.Errorf("file = \"\" with keep: %+v", got)
	}
}

func TestTraceBadValues(t *testing.T) {
	tests := []struct {
		name, lines, key, msg string
		line                  int
	}{
		{"max_size too small", "file = \"d.jsonl\"\nmax_size = 100", "max_size", "must be between 4096 and 1099511627776 bytes (4 KiB to 1 TiB), got 100 (the default is 67108864)", 4},
		{"max_size a string", `max_size = "10MB"`, "max_size", "expected", 3},
		{"keep negative", "file = \"d.jsonl\"\nkeep = -1", "keep", "must be between 0 and 100 files, got -1", 4},
		{"queue zero", "file = \"d.jsonl\"\nqueue = 0", "queue", "must be between 1 and 1048576 records, got 0", 4},
		{"file not a string", `file = 3`, "file", "expected a string", 3},
		{"include_content not a bool", `include_content = "yes"`, "include_content", "expected true or false", 3},
		{"settings without a file", "max_size = 8192", "max_size", `has no effect: trace.file is not set, so no decision log is written; set file = "decisions.jsonl" to write one, or remove this key`, 3},
		{"unknown key with suggestion", `kepe = 2`, "kepe", "did you mean keep?", 3},
		{"key of another table", `backend = "redis"`, "backend", "backend belongs in [state]", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("# decisions\n[trace]\n"+tt.lines+"\n"), "hookhost.toml", testDir)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "trace."+tt.key || ce.Line != tt.line || ce.File != "hookhost.toml" {
				t.Fatalf("err = %v, want a config error at hookhost.toml:%d for trace.%s", err, tt.line, tt.key)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("message %q, want it to say %q", ce.Msg, tt.msg)
			}
			if want := "hookhost.toml:" + strconv.Itoa(tt.line) + ": trace." + tt.key + ": "; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not start the way config errors do (%q)", err, want)
			}
		})
	}
}

// config.toml.example's commented [trace] block, uncommented, is a valid
// decision log with the defaults.
func TestExampleTraceBlock(t *testing.T) {
	data, err := os.ReadFile("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(data), "\n# [trace]\n")
	if !found {
		t.Fatal("config.toml.example has no commented [trace] block")
	}
	block, _, _ = strings.Cut(block, "\n\n")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimPrefix(l, "# "); !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	c := mustParse(t, "[trace]\n"+strings.Join(lines, "\n")+"\n")
	want := defaultTrace()
	want.File = testDir + "/decisions.jsonl"
	if !reflect.DeepEqual(c.Trace, want) {
		t.Fatalf("the example [trace] block:\n got %+v\nwant %+v", c.Trace, want)
	}
}
