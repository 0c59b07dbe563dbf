package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// buildDecider builds the decider test plugin into a plugins directory
// under name.
func buildDecider(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../../host/internal/testplugins/decider").CombinedOutput(); err != nil {
		t.Fatalf("building the decider plugin: %v\n%s", err, out)
	}
	return dir
}

// screen is what a terminal shows: everything the program wrote, read
// as it comes.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen int // where the next wait starts looking
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until text appears after what the last wait found, and
// moves past it.
func (s *screen) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		i := strings.Index(s.buf.String()[s.seen:], text)
		if i >= 0 {
			s.seen += i + len(text)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q after what came before; it shows:\n%s", text, truncate(s.String()))
}

// TestChatAsksThePersonAtTheTerminal drives the built hookhost chat
// through a real terminal, with a real plugin that answers ask on every
// tool call: y runs the tool, n blocks it, and Ctrl-C at the prompt denies
// that call only, after which the chat goes on.
func TestChatAsksThePersonAtTheTerminal(t *testing.T) {
	plugins := buildDecider(t, "asker")
	cfg := writeConfig(t, `[llm]
provider = "offline"
model = "offline-small"

[plugins]
enabled = ["asker"]
dir = "`+plugins+`"

[plugins.entries.asker.config]
default = "ask"
`)
	cmd := exec.Command(hookhostBinary(t), "chat", "-c", cfg)
	cmd.Env = append(os.Environ(), "HOOKHOST_USE_GATEWAY=1")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("starting hookhost chat on a terminal: %v", err)
	}
	defer tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	var sc screen
	copied := make(chan struct{})
	go func() {
		io.Copy(&sc, tty) // ends with EIO once the chat has exited
		close(copied)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(tty, s); err != nil {
			t.Fatalf("typing %q: %v", s, err)
		}
	}

	sc.waitFor(t, "> ")
	const reason = "asker wants a person to approve now"

	// y: the tool runs.
	send("what time is it\r")
	sc.waitFor(t, "approval needed: tool now")
	sc.waitFor(t, "reason: "+reason)
	sc.waitFor(t, "run it? [y/N] ")
	send("y\r")
	sc.waitFor(t, "approved")
	sc.waitFor(t, "From now:")
	sc.waitFor(t, "> ")

	// n: blocked, the reason in what the model read.
	send("what time is it\r")
	sc.waitFor(t, "run it? [y/N] ")
	send("n\r")
	sc.waitFor(t, "denied")
	sc.waitFor(t, "denied by the user: "+reason)
	sc.waitFor(t, "> ")

	// Ctrl-C at the prompt: blocked, and the chat goes on.
	send("what time is it\r")
	sc.waitFor(t, "run it? [y/N] ")
	send("\x03")
	sc.waitFor(t, "denied (Ctrl-C)")
	sc.waitFor(t, "denied by the user: "+reason)
	sc.waitFor(t, "> ")
	send("what time is it\r")
	sc.waitFor(t, "run it? [y/N] ")
	send("yes\r")
	sc.waitFor(t, "From now:")
	sc.waitFor(t, "> ")

	send("/exit\r")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("hookhost chat ended with %v; the terminal shows:\n%s", err, truncate(sc.String()))
		}
	case <-time.After(time.Minute):
		t.Fatalf("hookhost chat did not end after /exit; the terminal shows:\n%s", truncate(sc.String()))
	}
	<-copied
	if out := sc.String(); strings.Contains(out, "turn cancelled") {
		t.Errorf("Ctrl-C at the approval prompt cancelled the turn; the terminal shows:\n%s", truncate(out))
	}
}
