// Package servetest runs a real `hookhost serve` process for the tests that
// drive the gateway with real clients (the SDKs in gateway/clienttest, the
// agent CLIs in gateway/agenttest): started on a free loopback port, its
// log kept, and stopped with SIGTERM when the test ends, which must find
// it still running and see it exit cleanly.
package servetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running `hookhost serve` process.
type Server struct {
	// URL is where it serves, e.g. http://127.0.0.1:40123.
	URL string

	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
	err    error // the process's exit status, once exited is closed
	killed bool  // by Kill: its end is the test's doing
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it
// to exit; the test's end then expects it gone.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	s.killed = true
	s.mu.Unlock()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL to hookhost serve: %v", err)
	}
	<-s.exited
}

// Log is what the process has printed on stderr so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// Build builds the binaries a suite runs, pkgs naming each one's import
// path, into a new temporary directory (named after pattern, as
// os.MkdirTemp takes it) whose path it returns for the caller to remove;
// the error names the package that did not build and shows go build's
// output.
func Build(pattern string, pkgs map[string]string) (dir string, err error) {
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return "", err
	}
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkgs[name]).CombinedOutput()
		if err != nil {
			return dir, fmt.Errorf("building %s: %v\n%s", pkgs[name], err, out)
		}
	}
	return dir, nil
}

// StartWithConfig writes cfg as hookhost.toml into a temporary directory
// of the test and runs Start there with it.
func StartWithConfig(t testing.TB, bin, cfg string, env []string) *Server {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookhost.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return Start(t, bin, dir, path, env)
}

var servingLine = regexp.MustCompile(`hookhost: serving on (http://\S+)`)

// Start runs bin (a hookhost binary) as `serve -v -c config -listen
// 127.0.0.1:0` in dir with the environment env, and returns once it says
// where it serves.
func Start(t testing.TB, bin, dir, config string, env []string) *Server {
	t.Helper()
	s := &Server{exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve", "-v", "-c", config, "-listen", "127.0.0.1:0")
	s.cmd.Dir = dir
	s.cmd.Env = env
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.URL = <-addr:
	case <-s.exited:
		t.Fatalf("hookhost serve exited before serving (%v):\n%s", s.err, s.Log())
	case <-time.After(60 * time.Second):
		t.Fatalf("hookhost serve printed no %q line within 60s:\n%s", "hookhost: serving on", s.Log())
	}
	return s
}

// stop sends SIGTERM and expects a clean exit: requests are done by then,
// so the drain has nothing to wait for.
func (s *Server) stop(t testing.TB) {
	s.mu.Lock()
	killed := s.killed
	s.mu.Unlock()
	if killed {
		return
	}
	select {
	case <-s.exited:
		t.Errorf("hookhost serve exited on its own before the test ended (%v):\n%s", s.err, s.Log())
		return
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM to hookhost serve: %v", err)
	}
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("hookhost serve exited with %v after SIGTERM:\n%s", s.err, s.Log())
		}
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("hookhost serve was still running 60s after SIGTERM:\n%s", s.Log())
	}
}
