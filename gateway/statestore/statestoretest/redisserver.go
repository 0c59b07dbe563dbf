package statestoretest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
)

// startTimeout bounds a redis-server's start on a loaded machine.
const startTimeout = 30 * time.Second

// RedisServer is a throwaway redis-server for tests: listening on a free
// port of 127.0.0.1, keeping nothing on disk (its directory is a test's
// temporary one), a child of the test process that dies with it.
type RedisServer struct {
	tb   testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts a redis-server and stops it when tb ends. Without
// redis-server it skips tb saying how to install it (under CI, fails).
func StartRedis(tb testing.TB) *RedisServer {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Skip(tb, "redis-server not found (the Redis state backend's tests start their own)", "sudo apt-get install redis-server", err)
	}
	s := &RedisServer{tb: tb, bin: bin, dir: tb.TempDir()}
	var last error
	for range 5 {
		// Another process may take the port between its release here
		// and redis-server's bind: then try another.
		if s.port, err = freePort(); err != nil {
			tb.Fatal(err)
		}
		if last = s.start(); last == nil {
			tb.Cleanup(s.Stop)
			return s
		}
	}
	tb.Fatalf("statestoretest: redis-server did not start: %v", last)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("statestoretest: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr is host:port.
func (s *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is the server's redis:// URL.
func (s *RedisServer) URL() string { return "redis://" + s.Addr() }

func (s *RedisServer) start() error {
	log := filepath.Join(s.dir, "redis.log")
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--daemonize", "no", "--logfile", log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(startTimeout)
	for {
		if ping(s.Addr()) == nil {
			s.cmd, s.done = cmd, done
			return nil
		}
		select {
		case <-done:
			out, _ := os.ReadFile(log)
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server on port %d did not answer within %v", s.port, startTimeout)
		}
	}
}

// ping is PING over a fresh connection.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Stop kills the server, as a crash would, and waits for it to exit; its
// data, kept nowhere, is lost. Stopping a stopped server does nothing.
func (s *RedisServer) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts a stopped server again on the same port.
func (s *RedisServer) Restart() {
	s.tb.Helper()
	if s.cmd != nil {
		s.tb.Fatal("statestoretest: Restart of a running redis-server")
	}
	if err := s.start(); err != nil {
		s.tb.Fatalf("statestoretest: redis-server did not start again: %v", err)
	}
}
