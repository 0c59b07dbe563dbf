package offline

import (
	"reflect"
	"testing"
)

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"burn": "burn", "burns": "burn", "burned": "burn", "burning": "burn",
		"time": "tim", "times": "tim", "timing": "tim",
		"boxes": "box", "matches": "match", "queries": "query",
		"status": "status", "class": "class", "tokens": "token", "route": "rout",
		"red": "red", "using": "using", "is": "is",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := map[string][]string{
		"What's my burn?":         {"burn"},
		"kora__get_burn":          {"kora", "get", "burn"},
		"Please, can you add 2+2": {"add"},
		"Time, time and TIMES":    {"tim"},
		"window 7d":               {"window", "7d"},
	}
	for in, want := range tests {
		if got := terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	for in, want := range map[string]string{
		"what is 2+3*4":                "2+3*4",
		"what is 2 + 3 * 4?":           "2 + 3 * 4",
		"compute (1.5e3 - 2) / 4.":     "(1.5e3 - 2) / 4",
		"the sqrt(2) * pi, please":     "sqrt(2) * pi",
		"(what is 7 % 3)":              "7 % 3",
		"pow(2, 10) then":              "pow(2, 10)",
		"2 + 2 and then 10 * 10 * 10":  "10 * 10 * 10",
		"what happened on 2026-01-02?": "",
		"I have 3 apples":              "",
		"the e-mail":                   "",
		"no numbers - at all":          "",
		"-5":                           "",
	} {
		if got := arithmetic(in); got != want {
			t.Errorf("arithmetic(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindPath(t *testing.T) {
	for in, want := range map[string]string{
		"read go.mod":                  "go.mod",
		`open "/etc/hosts".`:           "/etc/hosts",
		"e.g. the file notes.md, ok":   "notes.md",
		"what is 2/3 of cmd/x/main.go": "cmd/x/main.go",
		"nothing here":                 "",
		"version 1.2":                  "",
	} {
		if got := findPath(in); got != want {
			t.Errorf("findPath(%q) = %q, want %q", in, got, want)
		}
	}
}
