package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLLMDefaultsPerProvider(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want LLM
	}{
		{
			name: "openai",
			src:  "[llm]\nprovider = \"openai\"\nmodel = \"gpt-4.1-mini\"\n",
			want: LLM{
				Provider: "openai", Model: "gpt-4.1-mini", API: "chat",
				BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY",
				Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
			},
		},
		{
			name: "anthropic needs max_tokens and gets 1024",
			src:  "[llm]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\n",
			want: LLM{
				Provider: "anthropic", Model: "claude-sonnet-4-5",
				BaseURL: "https://api.anthropic.com", APIKeyEnv: "ANTHROPIC_API_KEY",
				MaxTokens: 1024, Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
			},
		},
		{
			name: "offline ignores network settings",
			src:  "[llm]\nprovider = \"offline\"\napi = \"responses\"\nbase_url = \"http://localhost:1/v1\"\n",
			want: LLM{
				Provider: "offline", Model: "offline-small", BaseURL: "http://localhost:1/v1",
				Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
			},
		},
		{
			name: "model defaults to the small tier",
			src:  "[llm]\nprovider = \"openai\"\n[llm.tiers]\nsmall = \"gpt-4.1-mini\"\nstrong = \"gpt-4.1\"\n",
			want: LLM{
				Provider: "openai", Model: "gpt-4.1-mini", API: "chat",
				BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY",
				Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
				Tiers: Tiers{Small: "gpt-4.1-mini", Strong: "gpt-4.1"},
			},
		},
		{
			name: "local server without a key",
			src:  "[llm]\nprovider = \"openai\"\nmodel = \"llama3.2\"\nbase_url = \"http://localhost:11434/v1/\"\napi_key_env = \"\"\n",
			want: LLM{
				Provider: "openai", Model: "llama3.2", API: "chat",
				BaseURL: "http://localhost:11434/v1", APIKeyEnv: "",
				Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.src)
			if !reflect.DeepEqual(c.LLM, tt.want) {
				t.Errorf("LLM =\n%+v\nwant\n%+v", c.LLM, tt.want)
			}
		})
	}
}

// call_timeout bounds a whole call, so left unset it is never shorter than
// one attempt's timeout.
func TestCallTimeoutDefaultsToAtLeastTimeout(t *testing.T) {
	tests := []struct {
		src  string
		want time.Duration
	}{
		{"[llm]\n", 10 * time.Minute},
		{"[llm]\ntimeout = \"2m\"\n", 10 * time.Minute},
		{"[llm]\ntimeout = \"30m\"\n", 30 * time.Minute},
		{"[llm]\ntimeout = \"30m\"\ncall_timeout = \"30m\"\n", 30 * time.Minute},
		{"[llm]\ntimeout = \"30m\"\ncall_timeout = \"1h\"\n", time.Hour},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.src).LLM.CallTimeout; got != tt.want {
			t.Errorf("%q: call_timeout = %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestLLMEveryKey(t *testing.T) {
	c := mustParse(t, `
[llm]
provider = "openai"
model = "gpt-4.1"
api = "responses"
base_url = "https://gateway.example.com/openai/v1"
api_key_env = "GATEWAY_KEY"
max_tokens = 2048
temperature = 1
timeout = "2m"
call_timeout = "30m"
max_retries = 0

[llm.headers]
OpenAI-Project = "proj_123"
X-Route = "blue"

[llm.tiers]
small = "gpt-4.1-mini"
strong = "gpt-4.1"
`)
	one := 1.0
	want := LLM{
		Provider: "openai", Model: "gpt-4.1", API: "responses",
		BaseURL: "https://gateway.example.com/openai/v1", APIKeyEnv: "GATEWAY_KEY",
		Headers:   map[string]string{"OpenAI-Project": "proj_123", "X-Route": "blue"},
		MaxTokens: 2048, Temperature: &one, Timeout: 2 * time.Minute, CallTimeout: 30 * time.Minute, MaxRetries: 0,
		Tiers: Tiers{Small: "gpt-4.1-mini", Strong: "gpt-4.1"},
	}
	if !reflect.DeepEqual(c.LLM, want) {
		t.Errorf("LLM =\n%+v\nwant\n%+v", c.LLM, want)
	}
}

func TestLLMErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		key    string
		line   int
		msg    string
		secret string // must not appear in the error
	}{
		{
			name: "model required for a real provider",
			src:  "# models\n[llm]\nprovider = \"openai\"\n",
			key:  "llm.model", line: 2, msg: `is required with provider "openai"`,
		},
		{
			name: "unknown api",
			src:  "[llm]\nprovider = \"openai\"\nmodel = \"m\"\napi = \"completions\"\n",
			key:  "llm.api", line: 4, msg: `unknown api "completions" (use "chat"`,
		},
		{
			name: "api with anthropic",
			src:  "[llm]\nprovider = \"anthropic\"\nmodel = \"m\"\napi = \"chat\"\n",
			key:  "llm.api", line: 4, msg: `applies only to provider "openai"`,
		},
		{
			name: "base_url without scheme",
			src:  "[llm]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:11434\"\n",
			key:  "llm.base_url", line: 4, msg: "not an http or https URL",
		},
		{
			name: "base_url with credentials",
			src:  "[llm]\nbase_url = \"https://user:hunter2@example.com/v1\"\n",
			key:  "llm.base_url", line: 2, msg: "must not contain a user name or password", secret: "hunter2",
		},
		{
			name: "base_url with query",
			src:  "[llm]\nbase_url = \"https://example.com/v1?x=1\"\n",
			key:  "llm.base_url", line: 2, msg: "query",
		},
		{
			name: "anthropic base_url with /v1",
			src:  "[llm]\nprovider = \"anthropic\"\nmodel = \"m\"\nbase_url = \"https://api.anthropic.com/v1\"\n",
			key:  "llm.base_url", line: 4, msg: `drop the "/v1"`,
		},
		{
			name: "api key instead of a variable name",
			src:  "[llm]\napi_key_env = \"sk-proj-abc123-secret\"\n",
			key:  "llm.api_key_env", line: 2, msg: "not the key itself", secret: "sk-proj-abc123-secret",
		},
		{
			name: "credentials in headers",
			src:  "[llm.headers]\nAuthorization = \"Bearer sk-live-1\"\n",
			key:  "llm.headers.Authorization", line: 2, msg: "credentials do not go in this file", secret: "sk-live-1",
		},
		{
			name: "bad header name",
			src:  "[llm.headers]\n\"X Route\" = \"blue\"\n",
			key:  `llm.headers."X Route"`, line: 2, msg: "not a valid HTTP header name",
		},
		{
			name: "header value with newline",
			src:  "[llm.headers]\nX-Route = \"a\\nb\"\n",
			key:  "llm.headers.X-Route", line: 2, msg: "single line",
		},
		{
			name: "header value not a string",
			src:  "[llm]\nheaders = { X-Retries = 3 }\n",
			key:  "llm.headers.X-Retries", line: 2, msg: "expected a string",
		},
		{
			name: "zero max_tokens",
			src:  "[llm]\nmax_tokens = 0\n",
			key:  "llm.max_tokens", line: 2, msg: "at least 1",
		},
		{
			name: "max_tokens quoted",
			src:  "[llm]\nmax_tokens = \"512\"\n",
			key:  "llm.max_tokens", line: 2, msg: "max_tokens = 512",
		},
		{
			name: "temperature too high",
			src:  "[llm]\ntemperature = 2.5\n",
			key:  "llm.temperature", line: 2, msg: "between 0 and 2",
		},
		{
			name: "temperature quoted",
			src:  "[llm]\ntemperature = \"hot\"\n",
			key:  "llm.temperature", line: 2, msg: "expected a number",
		},
		{
			name: "anthropic temperature above 1",
			src:  "[llm]\nprovider = \"anthropic\"\nmodel = \"m\"\ntemperature = 1.5\n",
			key:  "llm.temperature", line: 4, msg: "between 0 and 1 for anthropic",
		},
		{
			name: "bad timeout",
			src:  "[llm]\ntimeout = \"soon\"\n",
			key:  "llm.timeout", line: 2, msg: "bad duration",
		},
		{
			name: "bad call_timeout",
			src:  "[llm]\nprovider = \"openai\"\nmodel = \"m\"\ncall_timeout = \"0s\"\n",
			key:  "llm.call_timeout", line: 4, msg: "must be greater than zero",
		},
		{
			name: "negative max_retries",
			src:  "[llm]\nmax_retries = -1\n",
			key:  "llm.max_retries", line: 2, msg: "between 0 and 10",
		},
		{
			name: "unknown tier",
			src:  "[llm.tiers]\nsmall = \"a\"\nmedium = \"b\"\n",
			key:  "llm.tiers.medium", line: 3, msg: "keys allowed in [llm.tiers] are small, strong",
		},
		{
			name: "strong tier equals small",
			src:  "[llm.tiers]\nsmall = \"a\"\nstrong = \"a\"\n",
			key:  "llm.tiers.strong", line: 3, msg: "same model as small",
		},
		{
			name: "empty tier",
			src:  "[llm.tiers]\nsmall = \"\"\n",
			key:  "llm.tiers.small", line: 2, msg: "must not be empty",
		},
		{
			name: "unquoted word for a number",
			src:  "[llm]\ntemperature = warm\n",
			key:  "llm.temperature", line: 2, msg: "write a number, e.g. temperature = 0.2",
		},
		{
			name: "call_timeout below timeout",
			src:  "[llm]\ntimeout = \"30m\"\ncall_timeout = \"20m\"\n",
			key:  "llm.call_timeout", line: 3, msg: `is 20m0s, shorter than llm.timeout ("30m0s" at hookhost.toml:2)`,
		},
		{
			name: "call_timeout below the default timeout",
			src:  "[llm]\ncall_timeout = \"30s\"\n",
			key:  "llm.call_timeout", line: 2, msg: `shorter than llm.timeout (default "1m0s")`,
		},
		{
			name: "llm timeout in the wrong table",
			src:  "[routing]\ntimeout = \"1s\"\n",
			key:  "routing.timeout", line: 2, msg: "timeout belongs in [llm] or [plugins.entries.<name>]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "hookhost.toml", testDir)
			if err == nil {
				t.Fatalf("Parse succeeded, want an error for %s", tt.key)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *config.Error", err, err)
			}
			if ce.Key != tt.key || ce.Line != tt.line {
				t.Errorf("error at line %d key %q, want line %d key %q\n%v", ce.Line, ce.Key, tt.line, tt.key, err)
			}
			prefix := "config: hookhost.toml:" + itoa(tt.line) + ": " + tt.key + ": "
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error = %q, want prefix %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.msg)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q echoes the secret", err)
			}
		})
	}
}

// The [llm] section of the example shows optional keys commented out; with
// them switched on (and a real provider) it must still be a valid file.
func TestExampleLLMKeysParse(t *testing.T) {
	data, err := os.ReadFile("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	start, end := strings.Index(src, "[llm]"), strings.Index(src, "[routing]")
	if start < 0 || end < start {
		t.Fatal("example has no [llm] section before [routing]")
	}
	var lines []string
	for _, l := range strings.Split(src[start:end], "\n") {
		if body, ok := strings.CutPrefix(l, "# "); ok && (strings.Contains(body, " = ") || strings.HasPrefix(body, "[llm.")) {
			l = body
		}
		lines = append(lines, l)
	}
	section := strings.Replace(strings.Join(lines, "\n"), `provider = "offline"`, `provider = "openai"`, 1)
	section = strings.Replace(section, `model = "offline-small"`, `model = "gpt-4.1-mini"`, 1)
	c, err := Parse([]byte(section), "example-llm.toml", testDir)
	if err != nil {
		t.Fatalf("uncommented [llm] section does not parse: %v\n%s", err, section)
	}
	if c.LLM.API != "chat" || c.LLM.MaxTokens != 1024 || c.LLM.Temperature == nil ||
		c.LLM.Headers["OpenAI-Project"] == "" || c.LLM.Tiers.Strong != "gpt-4.1" {
		t.Errorf("uncommented example = %+v", c.LLM)
	}
}
