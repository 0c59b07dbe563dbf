// Package nginxtest runs Debian's nginx as a reverse proxy for the
// gateway's tests and benchmarks: as the load balancer in front of
// hookhost replicas, and as the baseline a proxy's cost is measured
// against.
package nginxtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
)

// Package is the Debian package that installs nginx.
const Package = "nginx-light"

// InstallCommand is what installs nginx by hand.
const InstallCommand = "sudo apt-get install -y " + Package

// debianPath is where Debian puts nginx, in /usr/sbin, which a user's PATH
// may lack.
const debianPath = "/usr/sbin/nginx"

// Find returns nginx's path, or an error saying it is not installed.
func Find() (string, error) {
	bin, err := exec.LookPath("nginx")
	if err == nil {
		return bin, nil
	}
	if _, serr := os.Stat(debianPath); serr == nil {
		return debianPath, nil
	}
	return "", err
}

// installed is the outcome of the one install attempt a process makes.
var installed = sync.OnceValues(func() (string, error) {
	if bin, err := Find(); err == nil {
		return bin, nil
	}
	if err := testenv.AptInstall(Package); err != nil {
		return "", err
	}
	return Find()
})

// FindOrInstall returns nginx's path, installing Debian's nginx-light
// first when it is missing (as root, or through sudo that asks for no
// password). The install is tried once per process.
func FindOrInstall() (string, error) { return installed() }

// Proxy is how nginx proxies: to which servers, and what the upstream
// block and the location add.
type Proxy struct {
	// Servers are the upstream's host:port addresses, taken round-robin.
	Servers []string
	// ServerParams follow each server line (e.g. "max_fails=1").
	ServerParams string
	// Keepalive is how many idle connections to the upstream each worker
	// keeps; 0 opens one per request.
	Keepalive int
	// Workers is nginx's worker_processes; 0 means 1.
	Workers int
	// Location holds more directives for location / (one per line).
	Location string
}

// conf is nginx's whole configuration for p, with its files in dir,
// listening on port.
func (p Proxy) conf(dir string, port int) string {
	user := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise run as nobody, who cannot enter the
		// test's temporary directory.
		user = "user root;\n"
	}
	workers := max(p.Workers, 1)
	var upstream strings.Builder
	for _, s := range p.Servers {
		fmt.Fprintf(&upstream, "    server %s %s;\n", s, p.ServerParams)
	}
	if p.Keepalive > 0 {
		fmt.Fprintf(&upstream, "    keepalive %d;\n", p.Keepalive)
	}
	var location strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(p.Location), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			fmt.Fprintf(&location, "      %s\n", l)
		}
	}
	return fmt.Sprintf(`%sdaemon off;
worker_processes %d;
pid %[3]s/nginx.pid;
error_log %[3]s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[3]s/body;
  proxy_temp_path %[3]s/proxy;
  fastcgi_temp_path %[3]s/fastcgi;
  uwsgi_temp_path %[3]s/uwsgi;
  scgi_temp_path %[3]s/scgi;
  upstream backend {
%[4]s  }
  server {
    listen 127.0.0.1:%[5]d;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
%[6]s    }
  }
}
`, user, workers, dir, upstream.String(), port, location.String())
}

// Start runs nginx (bin) in the foreground as p says, on a free loopback
// port, until the test ends, and returns its URL.
func Start(tb testing.TB, bin string, p Proxy) string {
	tb.Helper()
	dir := tb.TempDir()
	var last error
	// A port found free may be taken before nginx binds it; try again.
	for range 5 {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		path := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(path, []byte(p.conf(dir, port)), 0o600); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if last = waitListening(port, done); last == nil {
			tb.Cleanup(func() {
				// The whole group: the master and its workers.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			})
			return fmt.Sprintf("http://127.0.0.1:%d", port)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		last = fmt.Errorf("%v: %s%s", last, out.Bytes(), log)
	}
	tb.Fatalf("nginx did not start: %v", last)
	return ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits for a connection to port to be accepted, or for the
// process to exit (done).
func waitListening(port int, done <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			return errors.New("nginx exited")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nginx did not listen on port %d within 30s", port)
		}
	}
}
