package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

// Fake secrets, shaped like real ones.
const (
	openAIKey = "sk-proj-EXAMPLE0fake0key0000000000000000"
	awsKey    = "AKIAIOSFODNN7EXAMPLE"
	ghToken   = "ghp_EXAMPLE0fake0token00000000000000000000"
)

func TestRedactText(t *testing.T) {
	rs := defaultRules
	for _, tc := range []struct{ in, want string }{
		{"key: " + openAIKey, "key: [REDACTED:openai_key]"},
		{"OPENAI_API_KEY=" + openAIKey + "\nDEBUG=1", "OPENAI_API_KEY=[REDACTED:openai_key]\nDEBUG=1"},
		{"aws " + awsKey + " ok", "aws [REDACTED:aws_access_key] ok"},
		{"token " + ghToken, "token [REDACTED:github_token]"},
		{"Authorization: Bearer eyJhbGciOi.J9eyJzdWIi.Oi_xyz-123", "Authorization: Bearer [REDACTED:bearer_token]"},
		{"db_password = hunter2; user = app", "db_password = [REDACTED:secret_assignment]; user = app"},
		{"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY=[REDACTED:secret_assignment]"},
		{`{"api_key": "abc123"}`, `{"api_key": "[REDACTED:secret_assignment]"}`},
		{"write to ada.lovelace+notes@example.co.uk today", "write to [REDACTED:email] today"},
		// Near misses stay as they are.
		{"max_tokens = 512, token_type = bearer", "max_tokens = 512, token_type = bearer"},
		{"ask-me-anything and task-list", "ask-me-anything and task-list"},
		{"a bearer of news", "a bearer of news"},
		{"user@localhost", "user@localhost"},
	} {
		got, _ := rs.redactText(tc.in)
		if got != tc.want {
			t.Errorf("redactText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactJSONKeepsTheDocument(t *testing.T) {
	rs := defaultRules
	// What read_file returns for a .env file: the secrets are inside a JSON
	// string, with escaped newlines and quotes.
	in := `{"path":".env","content":"OPENAI_API_KEY=` + openAIKey + `\nADMIN=\"ops@example.com\"\n","size":97,"truncated":false}`
	want := `{"path":".env","content":"OPENAI_API_KEY=[REDACTED:openai_key]\nADMIN=\"[REDACTED:email]\"\n","size":97,"truncated":false}`
	got, kinds := rs.redact(in)
	if got != want {
		t.Errorf("redact\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("result is not JSON: %s", got)
	}
	if !slices.Equal(kinds, []string{"email", "openai_key"}) {
		t.Errorf("kinds = %v", kinds)
	}

	// A key naming a secret has its value masked whole, whatever it is;
	// its other keys and values, and the layout, are left alone.
	in = "{\n  \"user\": \"app\",\n  \"password\": \"correct horse battery staple\",\n  \"max_tokens\": \"512\",\n  \"n\": [1, 2]\n}"
	want = "{\n  \"user\": \"app\",\n  \"password\": \"[REDACTED:secret_assignment]\",\n  \"max_tokens\": \"512\",\n  \"n\": [1, 2]\n}"
	if got, _ := rs.redact(in); got != want {
		t.Errorf("redact\n got %s\nwant %s", got, want)
	}
}

func TestTransformReturnsNilWhenNothingChanged(t *testing.T) {
	h := plugintest.New(t, &redactor{}, plugintest.WithConfig(`{}`))
	res, by := h.TransformToolResult("now", `{}`, `{"time":"2026-11-22T04:41:07Z"}`)
	if len(by) != 0 || res.Content != `{"time":"2026-11-22T04:41:07Z"}` {
		t.Errorf("clean result changed: %+v by %v", res, by)
	}
	res, by = h.TransformToolResult("read_file", `{}`, `{"content":"mail me: a@b.io"}`)
	if !slices.Equal(by, []string{"redactor"}) || res.Content != `{"content":"mail me: [REDACTED:email]"}` {
		t.Errorf("result with an email: %+v by %v", res, by)
	}
}

func TestConfiguredMaskDisableAndPatterns(t *testing.T) {
	h := plugintest.New(t, &redactor{}, plugintest.WithConfig(`{
		"mask": "<{kind}>",
		"disable": ["email"],
		"patterns": [
			{"name": "ssn", "regex": "\\b\\d{3}-\\d{2}-\\d{4}\\b"},
			{"name": "card", "regex": "card (?P<secret>\\d{4}) on file"}
		]
	}`))
	res, _ := h.TransformToolResult("lookup", `{}`, "ops@example.com, 078-05-1120, card 4242 on file, "+awsKey)
	if want := "ops@example.com, <ssn>, card <card> on file, <aws_access_key>"; res.Content != want {
		t.Errorf("got  %q\nwant %q", res.Content, want)
	}
}

func TestErrorResultsStayErrors(t *testing.T) {
	r := &redactor{}
	if err := r.Configure(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	h := plugintest.New(t, r)
	res, _ := h.Bus.TransformToolResult(context.Background(), hooks.ToolCallOutcome{
		Name: "login", Arguments: json.RawMessage(`{}`), Status: hooks.StatusError,
		Result: hooks.ToolResult{Content: `{"error":"login failed for bob@example.com"}`, IsError: true},
	})
	if !res.IsError || !strings.Contains(res.Content, "[REDACTED:email]") {
		t.Errorf("error result: %+v", res)
	}
}

func TestConfigureRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`{"disable": ["emails"]}`, `disable: unknown pattern "emails" (built-in patterns: openai_key,`},
		{`{"patterns": [{"name": "ssn", "regex": "(\\d"}]}`, `patterns[0] (ssn): regex "(\\d" is not a valid regular expression`},
		{`{"patterns": [{"name": "email", "regex": "x"}]}`, `patterns[0]: name "email" is already taken`},
		{`{"patterns": [{"name": "a", "regex": "x"}, {"name": "a", "regex": "y"}]}`, `patterns[1]: name "a" is already taken`},
		{`{"patterns": [{"name": "Bad Name", "regex": "x"}]}`, `patterns[0]: name "Bad Name" must be lower case`},
		{`{"patterns": [{"name": "x"}]}`, `patterns[0] (x): regex is required`},
		{`{"mask": "[{type}]"}`, `mask: unknown placeholder {type}`},
		{`{"masks": "x"}`, `unknown key "masks"`},
		{`{"patterns": {"name": "x"}}`, `patterns: wrong type: got object, want list`},
	} {
		err := (&redactor{}).Configure(context.Background(), json.RawMessage(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Configure(%s) = %v, want an error containing %q", tc.config, err, tc.want)
		}
	}
}
