package host

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// environHostEnv runs the test binary as a host that holds a secret in
	// its environment: "protected" starts a Host (with no plugins), "bare"
	// does not. It prints "ready" and waits to be killed.
	environHostEnv = "HOST_TEST_ENVIRON_HOST"
	// environReaderEnv runs the test binary as a process that reads
	// /proc/<pid>/environ of the pid it holds and prints "read" or the error.
	environReaderEnv = "HOST_TEST_ENVIRON_READER"
	environSecret    = "HOST_TEST_API_KEY=sk-do-not-leak"
	nobody           = 65534
)

// environHelper runs the helper processes of TestPluginsCannotReadTheHostsEnvironment.
func environHelper() (int, bool) {
	if mode := os.Getenv(environHostEnv); mode != "" {
		if mode == "protected" {
			h, _ := Start(context.Background(), Specs(configOf()), Options{})
			defer h.Close(context.Background())
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 0, true
	}
	if pid := os.Getenv(environReaderEnv); pid != "" {
		data, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
		switch {
		case err != nil:
			fmt.Println(err)
		case strings.Contains(string(data), environSecret):
			fmt.Println("read")
		default:
			fmt.Println("read, but no secret in it")
		}
		return 0, true
	}
	return 0, false
}

// TestPluginsCannotReadTheHostsEnvironment runs a host and a reader as the
// same unprivileged user, as a plugin runs beside its host: the current
// user, or, for root (which reads every process's environ), nobody.
func TestPluginsCannotReadTheHostsEnvironment(t *testing.T) {
	t.Parallel()
	bin := os.Args[0]
	var sameUser *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		// nobody must be able to run the test binary.
		dir, err := os.MkdirTemp("", "hookhost-environ-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		bin = filepath.Join(dir, "host.test")
		if err := linkOrCopy(os.Args[0], bin); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		sameUser = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}

	read := func(t *testing.T, mode string) string {
		host := exec.Command(bin, "-test.run=^$")
		host.Env = []string{environHostEnv + "=" + mode, environSecret}
		host.SysProcAttr = sameUser
		host.Stderr = os.Stderr
		out, err := host.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := host.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { host.Process.Kill(); host.Wait() }()
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("helper host: %q, %v", line, err)
		}
		reader := exec.Command(bin, "-test.run=^$")
		reader.Env = []string{fmt.Sprintf("%s=%d", environReaderEnv, host.Process.Pid)}
		reader.SysProcAttr = sameUser
		got, err := reader.Output()
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
		return strings.TrimSpace(string(got))
	}
	// Without the protection, the same user reads the secret: the setup
	// can see what it tests for.
	if got := read(t, "bare"); got != "read" {
		t.Fatalf("reading an unprotected host's environ: %s, want read", got)
	}
	if got := read(t, "protected"); !strings.Contains(got, "permission denied") {
		t.Fatalf("reading a protected host's environ: %s, want permission denied", got)
	}
}

// linkOrCopy puts the file from at to: a hard link where nobody can run
// it through the link, a copy otherwise. A copy is a file open for writing
// for a while, and a process the parallel tests start meanwhile inherits
// that descriptor until it execs: running the copy then fails with "text
// file busy". A link is never open for writing.
func linkOrCopy(from, to string) error {
	if st, err := os.Stat(from); err == nil && st.Mode().Perm()&0o005 == 0o005 {
		if os.Link(from, to) == nil {
			return nil
		}
	}
	return copyFile(from, to)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
