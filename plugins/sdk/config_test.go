package sdk_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/plugins/sdk"
)

type limits struct {
	MaxEntries int      `json:"max_entries"`
	Tools      []string `json:"tools"`
	Budget     struct {
		DailyUSD float64 `json:"daily_usd"`
	} `json:"budget"`
}

func TestDecodeConfig(t *testing.T) {
	cases := []struct {
		raw, want string
	}{
		{``, ""},
		{`{}`, ""},
		{`{"max_entries": 3, "tools": ["a"], "budget": {"daily_usd": 1.5}}`, ""},
		{`{"max_entrys": 3}`, `unknown key "max_entrys"`},
		{`{"max_entries": "3"}`, "max_entries: wrong type: got string, want int"},
		{`{"tools": "a"}`, "tools: wrong type: got string, want list"},
		{`{"budget": 2}`, "budget: wrong type: got number, want table"},
		{`{"budget": {"daily": 2}}`, `unknown key "daily"`},
	}
	for _, c := range cases {
		var l limits
		err := sdk.DecodeConfig(json.RawMessage(c.raw), &l)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.raw, err, c.want)
		}
	}
}

func ExampleDecodeConfig() {
	var cfg struct {
		Tools []string `json:"tools"`
	}
	// What the host hands Configure for [plugins.entries.cache.config]
	// with a misspelt key.
	err := sdk.DecodeConfig(json.RawMessage(`{"tool": ["read_file"]}`), &cfg)
	fmt.Println(err)
	// Output:
	// unknown key "tool"
}
