// Package exampletest holds what the example plugins' tests share: building
// a plugin binary, starting it under the real host, and checking that the
// configs shown to users (example.toml, the TOML blocks of a README) are
// ones hookhost and the plugin accept. Example plugins stay free of it;
// only their tests import it.
package exampletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/host"
)

// Liveness bounds how long a test waits for a plugin process to do
// something (restart, exit) before it fails.
const Liveness = 15 * time.Second

// Build compiles the package main in the current directory into dir/name
// and returns the binary's path.
func Build(dir, name string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, ".")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the %s plugin: %v\n%s", name, err, stderr.String())
	}
	return out, nil
}

// Main builds the plugin in the current directory into a temporary
// directory, stores its path in *bin, runs the tests and exits. Call it
// from TestMain.
func Main(m *testing.M, name string, bin *string) {
	dir, err := os.MkdirTemp("", "hookhost-example-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin, err = Build(dir, name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Log collects the host's and the plugins' logs and prints them only when
// the test fails. Plugins log from their own goroutines, possibly after the
// test returned, so they never write to t directly.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// NewLog returns a Log that is shown if t fails.
func NewLog(t testing.TB) *Log {
	l := &Log{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host and plugin log:\n%s", l.String())
		}
	})
	return l
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger returns an hclog.Logger writing to l.
func (l *Log) Logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Debug, Output: l})
}

// Parse parses a hookhost config given as TOML, failing the test on error.
func Parse(t testing.TB, toml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(toml), "test.toml", t.TempDir())
	if err != nil {
		t.Fatalf("config:\n%s\n%v", toml, err)
	}
	return cfg
}

// Start starts the plugins of cfg under the real host, fails the test if
// any does not start, and returns the host and a Bus over it. Both are
// closed when the test ends. opts.Logger defaults to a Log shown on
// failure.
func Start(t testing.TB, cfg *config.Config, opts host.Options) (*host.Host, *hookbus.Bus) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = NewLog(t).Logger()
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), opts)
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("closing the host: %v", err)
		}
	})
	for _, e := range errs {
		t.Fatalf("plugin did not start: %v", e)
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: opts.Logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return h, bus
}

// WaitFor polls cond until it holds, failing the test after Liveness.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", Liveness, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Gone reports whether process pid has ended. A zombie counts as ended: it
// only waits for its parent to reap it.
func Gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] == 'Z' || data[i+2] == 'X'
	}
	return false
}

// Example loads the example config at path with config.Load, as hookhost
// would, and returns it with the entry of plugin name. It fails the test
// unless name is enabled and its binary is expected under the repository's
// bin/plugins, where `make plugins` puts it.
func Example(t testing.TB, path, name string) (*config.Config, config.PluginEntry) {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("%s does not load: %v", path, err)
	}
	enabled := false
	for _, n := range cfg.Plugins.Enabled {
		enabled = enabled || n == name
	}
	if !enabled {
		t.Fatalf("%s: plugins.enabled = %q does not enable %q", path, cfg.Plugins.Enabled, name)
	}
	entry := cfg.Entry(name)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(path), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo, "bin", "plugins", name); entry.Path != want {
		t.Errorf("%s: plugin %s resolves to %s, want %s (where make plugins builds it)", path, name, entry.Path, want)
	}
	return cfg, entry
}

var tomlBlock = regexp.MustCompile("(?s)```toml\n(.*?)```")

// TOMLBlocks returns the ```toml blocks of a Markdown file, each of which
// must be a config hookhost accepts: the test parses it with config.Parse.
func TOMLBlocks(t testing.TB, path string) []*config.Config {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*config.Config
	for _, m := range tomlBlock.FindAllSubmatch(data, -1) {
		cfg, err := config.Parse(m[1], path, filepath.Dir(path))
		if err != nil {
			t.Errorf("a TOML block of %s is not a valid hookhost config:\n%s\n%v", path, m[1], err)
			continue
		}
		out = append(out, cfg)
	}
	if len(out) == 0 && !t.Failed() {
		t.Fatalf("%s has no ```toml block", path)
	}
	return out
}

// PluginConfigs returns the [plugins.entries.<name>.config] tables the
// configs give, as JSON, skipping configs that have none.
func PluginConfigs(cfgs []*config.Config, name string) []json.RawMessage {
	var out []json.RawMessage
	for _, c := range cfgs {
		if e, ok := c.Plugins.Entries[name]; ok && strings.TrimSpace(string(e.Config)) != "{}" {
			out = append(out, e.Config)
		}
	}
	return out
}
