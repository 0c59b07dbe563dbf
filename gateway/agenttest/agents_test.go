package agenttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
)

// installCommand is what makes the agent CLIs available to these tests.
const installCommand = "make agents (or: cd gateway/agenttest && npm ci --no-audit --no-fund)"

// runEnv asks for the agent CLI tests; without it they skip, since they
// take minutes and a gigabyte of npm packages.
const runEnv = "HOOKHOST_AGENTS"

// needAgents stops a test that is not asked for or cannot run: it skips
// unless runEnv is set, and then fails when a CLI is missing, so that CI,
// which asks, never passes by skipping.
func needAgents(t *testing.T, a agent) {
	t.Helper()
	if os.Getenv(runEnv) == "" {
		if os.Getenv("CI") != "" {
			t.Logf("the agent CLIs run in `make agents`, which .ci/run runs; %s is not set here", runEnv)
		}
		testenv.SkipUnlessRun(t, "the agent CLIs run in `make agents`, not in make test ("+runEnv+"=1 is not set)", "make agents")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if _, err := os.Stat(a.binary()); err != nil {
		t.Fatalf("%s is not installed (%v): %s", a.name, err, installCommand)
	}
}

// agent is one agent CLI: how to point it at hookhost and run one prompt
// headless, and which of its own tools runs a shell command.
type agent struct {
	name string
	bin  string // under node_modules/.bin
	// front is the protocol the CLI speaks to hookhost.
	front string
	// model is the model name the CLI is told to ask for when hookhost's
	// upstream speaks the CLI's protocol, crossModel when it speaks
	// another ("" means model): a user names the models their upstream
	// serves.
	model, crossModel string
	// shell names the CLI's shell tool among the tools a request offers
	// and renders the arguments that run command with it.
	shell func(tools []string) (name string, args func(command string) string)
	// command is the command line that runs prompt in dir, with home as
	// HOME, against hookhost at root (http://127.0.0.1:port).
	command func(t *testing.T, root, home, dir, model, prompt string) (args, env []string)
}

// modelFor is the model the CLI asks for when hookhost's upstream speaks
// proto.
func (a agent) modelFor(proto string) string {
	if proto != a.front && a.crossModel != "" {
		return a.crossModel
	}
	return a.model
}

func (a agent) binary() string {
	p, _ := filepath.Abs(filepath.Join("node_modules", ".bin", a.bin))
	return p
}

// quietEnv is what every CLI runs with: no tracking, no colours in what
// it prints, and CI=1 so that it knows nobody is at the terminal. Each
// CLI's own switches for telemetry, update checks and catalogues are set
// in its command.
var quietEnv = []string{
	"DO_NOT_TRACK=1",
	"NO_COLOR=1",
	"CI=1",
}

func jsonArgs(v any) string { return string(mustJSON(v)) }

var agents = []agent{
	{
		name:       "claude-code",
		bin:        "claude",
		front:      messages,
		model:      "claude-sonnet-4-5",
		crossModel: "gpt-4.1-mini",
		shell: func(tools []string) (string, func(string) string) {
			if !slices.Contains(tools, "Bash") {
				return "", nil
			}
			return "Bash", func(c string) string { return jsonArgs(obj{"command": c, "description": "Run a shell command"}) }
		},
		command: func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
			args := []string{"-p", prompt, "--model", model, "--output-format", "text",
				"--allowedTools", "Bash", "--permission-mode", "acceptEdits"}
			env := append(claudeEnv(root, model), "ANTHROPIC_API_KEY="+clientKey, "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
			return args, env
		},
	},
	{
		name:  "codex",
		bin:   "codex",
		front: responses,
		model: "gpt-5-codex",
		shell: func(tools []string) (string, func(string) string) {
			switch {
			case slices.Contains(tools, "exec_command"):
				return "exec_command", func(c string) string { return jsonArgs(obj{"cmd": c}) }
			case slices.Contains(tools, "shell_command"):
				return "shell_command", func(c string) string { return jsonArgs(obj{"command": c}) }
			case slices.Contains(tools, "shell"):
				return "shell", func(c string) string { return jsonArgs(obj{"command": []string{"bash", "-lc", c}}) }
			}
			return "", nil
		},
		command: func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
			codexHome := filepath.Join(home, ".codex")
			if err := os.MkdirAll(codexHome, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := fmt.Sprintf(codexConfig, model, root+"/v1")
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-C", dir, prompt}
			env := []string{"CODEX_HOME=" + codexHome, "HOOKHOST_API_KEY=" + clientKey}
			return args, env
		},
	},
	{
		name:       "opencode",
		bin:        "opencode",
		front:      chat,
		model:      "gpt-4.1-mini",
		crossModel: "claude-sonnet-4-5",
		shell: func(tools []string) (string, func(string) string) {
			if !slices.Contains(tools, "bash") {
				return "", nil
			}
			return "bash", func(c string) string { return jsonArgs(obj{"command": c, "description": "Run a shell command"}) }
		},
		command: func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
			cfg := fmt.Sprintf(opencodeConfig, model, model, root+"/v1", model, model)
			path := filepath.Join(home, "opencode.json")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--print-logs", "--log-level", "INFO", "--dir", dir, "--model", "hookhost/" + model, prompt}
			// The test's opencode reads only its own config: no project
			// config found above the temporary directory, no other agent's
			// settings or skills.
			env := append([]string{"OPENCODE_CONFIG=" + path, "HOOKHOST_API_KEY=" + clientKey,
				"OPENCODE_DISABLE_PROJECT_CONFIG=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1"}, opencodeQuiet...)
			return args, env
		},
	},
}

// claudeEnv points Claude Code at hookhost at root, asking for model for
// its work and its side tasks alike, with its traffic to other hosts off.
// The README shows these as its recipe.
func claudeEnv(root, model string) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + root,
		"ANTHROPIC_MODEL=" + model,
		"ANTHROPIC_SMALL_FAST_MODEL=" + model,
		"ANTHROPIC_DEFAULT_HAIKU_MODEL=" + model,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

// opencodeQuiet keeps opencode from fetching model catalogues, plugins,
// language servers and updates, and from sharing sessions.
// The README shows these as its recipe.
var opencodeQuiet = []string{
	"OPENCODE_DISABLE_AUTOUPDATE=1",
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"OPENCODE_DISABLE_SHARE=1",
}

// codexConfig points Codex at hookhost as a custom model provider
// speaking the Responses API.
const codexConfig = `model = %q
model_provider = "hookhost"
check_for_update_on_startup = false

[model_providers.hookhost]
name = "hookhost"
base_url = %q
env_key = "HOOKHOST_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[feedback]
enabled = false
`

// opencodeConfig points opencode at hookhost as an OpenAI-compatible
// provider.
const opencodeConfig = `{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "hookhost/%s",
  "small_model": "hookhost/%s",
  "provider": {
    "hookhost": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "hookhost",
      "options": { "baseURL": %q, "apiKey": "{env:HOOKHOST_API_KEY}" },
      "models": { %q: { "name": %q, "tool_call": true } }
    }
  },
  "permission": { "bash": "allow", "edit": "allow", "read": "allow", "external_directory": "allow" }
}
`

// ran is what one CLI run printed.
type ran struct {
	stdout, stderr string
	err            error
	home           string // the HOME it ran with
}

// runAgent runs prompt through a headless, with a fresh HOME and working
// directory dir, against hookhost at root.
func runAgent(t *testing.T, a agent, root, dir, model, prompt string) ran {
	t.Helper()
	home := t.TempDir()
	args, env := a.command(t, root, home, dir, model, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.binary(), args...)
	cmd.Dir = dir
	// PWD too: a CLI may take its project directory from it rather than
	// from the directory it was started in.
	cmd.Env = append(environ(), "HOME="+home, "PWD="+dir, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local/share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "TMPDIR="+home)
	cmd.Env = append(cmd.Env, quietEnv...)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = nil
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s was still running after 3 minutes\nstdout: %s\nstderr: %s", a.name, stdout.String(), stderr.String())
	}
	return ran{stdout.String(), stderr.String(), err, home}
}
