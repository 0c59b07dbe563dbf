package sampling

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		req  llm.Request
		want string
	}{
		{llm.Request{}, ""},
		{llm.Request{Temperature: f64(0), TopP: f64(0)}, ""},
		{llm.Request{Temperature: f64(2), TopP: f64(1)}, ""},
		{llm.Request{Temperature: f64(math.NaN())}, "temperature is NaN"},
		{llm.Request{Temperature: f64(-0.1)}, "temperature is -0.1"},
		{llm.Request{Temperature: f64(math.Inf(1))}, "temperature is +Inf"},
		{llm.Request{TopP: f64(math.NaN())}, "top_p is NaN"},
		{llm.Request{TopP: f64(1.01)}, "top_p is 1.01; it must be a number from 0 to 1"},
	} {
		err := Check(tc.req)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.req, err, tc.want)
		}
	}
}

func TestSame(t *testing.T) {
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"top_p": json.RawMessage(`0.50`), "seed": json.RawMessage(` 7 `), "user": json.RawMessage(`"u"`),
		"stop": json.RawMessage(`"END"`), "stop_sequences": json.RawMessage(`["a","b"]`), "null": json.RawMessage(`null`),
	}}
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"top_p equal", SameFloat(pass, "top_p", f64(0.5)), true},
		{"top_p changed", SameFloat(pass, "top_p", f64(0.6)), false},
		{"top_p unset", SameFloat(pass, "top_p", nil), false},
		{"top_p absent", SameFloat(pass, "missing", f64(0.5)), false},
		{"null", SameFloat(pass, "null", f64(0)), false},
		{"nil pass", SameFloat(nil, "top_p", f64(0.5)), false},
		{"seed equal", SameInt(pass, "seed", i64(7)), true},
		{"seed changed", SameInt(pass, "seed", i64(8)), false},
		{"user equal", SameString(pass, "user", "u"), true},
		{"user empty", SameString(pass, "user", ""), false},
		{"stop one string", SameStrings(pass, "stop", []string{"END"}), true},
		{"stop one string vs two", SameStrings(pass, "stop", []string{"END", "X"}), false},
		{"stop list", SameStrings(pass, "stop_sequences", []string{"a", "b"}), true},
		{"stop list order", SameStrings(pass, "stop_sequences", []string{"b", "a"}), false},
		{"stop empty", SameStrings(pass, "stop_sequences", nil), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
