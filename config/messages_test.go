package config

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var updateMessages = flag.Bool("update-messages", false, "rewrite testdata/messages.json with what Parse says now")

// messageCase is a config file and the error Parse reports for it.
type messageCase struct {
	In  string `json:"in"`
	Err string `json:"err"`
}

// TestMessagesStayWordForWord parses files that each draw a different
// message (bad types, bad values, unknown and misspelt keys, keys in the
// wrong table, broken syntax) and checks every message word for word, so
// that a change to how values are decoded cannot change what a user is
// told. A deliberate change of wording is written with -update-messages.
func TestMessagesStayWordForWord(t *testing.T) {
	const path = "testdata/messages.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []messageCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases) < 200 {
		t.Fatalf("%s holds %d cases; it should hold over 200", path, len(cases))
	}
	for i, c := range cases {
		_, err := Parse([]byte(c.In), "hookhost.toml", "/etc/hookhost")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if *updateMessages {
			cases[i].Err = got
			continue
		}
		if got != c.Err {
			t.Errorf("Parse(%q):\n got %s\nwant %s", c.In, got, c.Err)
		}
	}
	if *updateMessages {
		out, err := json.MarshalIndent(cases, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
