package agenttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// recordEnv makes TestAgents write what the CLIs sent as fixtures under
// testdata/<cli>/, which TestReplay sends again on every `make test`.
const recordEnv = "HOOKHOST_AGENTS_RECORD"

// fixture is one request an agent CLI sent to hookhost, sanitised.
type fixture struct {
	// CLI is the CLI and version that sent it, Scenario what it was doing
	// and Upstream which upstream hookhost had then ("same": one speaking
	// the CLI's protocol; "cross": another).
	CLI      string            `json:"cli"`
	Scenario string            `json:"scenario"`
	Upstream string            `json:"upstream"`
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Header   map[string]string `json:"header"`
	Body     json.RawMessage   `json:"body"`
}

// keptHeaders are the request headers a fixture keeps: those that change
// how hookhost reads a request. Keys, session ids and the like are left
// out.
var keptHeaders = []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta", "Openai-Beta"}

// versions are the CLIs' versions, as package-lock.json pins them.
var versions = map[string]string{
	"claude-code": "@anthropic-ai/claude-code 2.1.332",
	"codex":       "@openai/codex 0.171.0",
	"opencode":    "opencode-ai 1.18.33",
}

var (
	uuidRE  = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	hex64RE = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	nonceRE = regexp.MustCompile(`note-[0-9a-f]{16}`)
	tmpRE   = regexp.MustCompile(`/tmp/[^"\s\\]*`)
)

// sanitise takes out of a request body what belongs to this machine or run:
// the working directory and home (temporary directories named after the
// test), the repository's path, ids, the scenario's nonce and any key.
func sanitise(body []byte, dir, home string) []byte {
	s := string(body)
	if repo, err := filepath.Abs("../.."); err == nil {
		s = strings.ReplaceAll(s, repo, "/src/hookhost")
	}
	s = strings.ReplaceAll(s, dir, "/work/project")
	s = strings.ReplaceAll(s, home, "/home/user")
	s = tmpRE.ReplaceAllString(s, "/tmp/x")
	s = uuidRE.ReplaceAllString(s, "00000000-0000-0000-0000-000000000000")
	s = hex64RE.ReplaceAllString(s, strings.Repeat("0", 64))
	s = nonceRE.ReplaceAllString(s, "note-0000000000000000")
	for _, k := range []string{clientKey, upstreamKey} {
		s = strings.ReplaceAll(s, k, "sk-redacted")
	}
	return []byte(s)
}

// saveFixtures writes the requests a CLI sent in scenario own-tool, the
// one with a tool round trip, once for each upstream kind; identical
// requests (a CLI's retries) are written once.
func saveFixtures(t *testing.T, a agent, sc scenario, r run, kind string) {
	t.Helper()
	if sc.name != "own-tool" {
		return
	}
	dir := filepath.Join("testdata", a.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, kind+"-*.json"))
	for _, f := range old {
		os.Remove(f)
	}
	var seenBodies [][32]byte
	n := 0
	for _, ex := range r.clientEx {
		if ex.Method != http.MethodPost || ex.Path != paths[a.front] {
			continue
		}
		body := sanitise(ex.Body, r.dir, r.out.home)
		sum := sha256.Sum256(body)
		if slices.Contains(seenBodies, sum) {
			continue
		}
		seenBodies = append(seenBodies, sum)
		f := fixture{CLI: versions[a.name], Scenario: sc.name, Upstream: kind, Method: ex.Method, Path: ex.Path, Header: map[string]string{}}
		for _, h := range keptHeaders {
			if v := ex.Header.Get(h); v != "" {
				f.Header[strings.ToLower(h)] = v
			}
		}
		if !json.Valid(body) {
			t.Fatalf("a request %s sent is not JSON once sanitised", a.name)
		}
		f.Body = body
		out, err := json.MarshalIndent(f, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{clientKey, upstreamKey, r.dir, r.out.home} {
			if bytes.Contains(out, []byte(k)) {
				t.Fatalf("a fixture of %s still holds %q", a.name, k)
			}
		}
		n++
		path := filepath.Join(dir, fmt.Sprintf("%s-%02d.json", kind, n))
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
}
