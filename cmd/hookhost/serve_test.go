package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// servingPrefix starts the line serve prints once it listens; scripts and
// tests read the address from it.
const servingPrefix = "hookhost: serving on http://"

// waitServing reads r line by line until the serving line and returns the
// base URL; every line read is kept in log. The rest of r is drained in
// the background so that the writer never blocks.
func waitServing(t *testing.T, r io.Reader, log *strings.Builder) string {
	t.Helper()
	found := make(chan string, 1)
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			select {
			case lines <- line:
			default:
			}
			if !sent && strings.HasPrefix(line, servingPrefix) {
				found <- "http://" + strings.TrimPrefix(line, servingPrefix)
				sent = true
			}
		}
		close(lines)
	}()
	deadline := time.After(time.Minute)
	for {
		select {
		case url := <-found:
			for {
				select {
				case l := <-lines:
					log.WriteString(l + "\n")
				default:
					return url
				}
			}
		case l, ok := <-lines:
			if !ok {
				select {
				case url := <-found:
					return url
				default:
				}
				t.Fatalf("serve ended without a serving line:\n%s", log.String())
			}
			log.WriteString(l + "\n")
		case <-deadline:
			t.Fatalf("no serving line within a minute:\n%s", log.String())
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// checkServes calls /healthz and one chat completion on the offline model.
func checkServes(t *testing.T, base string) {
	t.Helper()
	if code, body := get(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"offline-large","messages":[{"role":"user","content":"what is 6*7"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("chat completion: %d %s", resp.StatusCode, body)
	}
	if out.Object != "chat.completion" || len(out.Choices) != 1 || out.Choices[0].Message.Role != "assistant" ||
		out.Choices[0].Message.Content == nil || !strings.Contains(*out.Choices[0].Message.Content, "what is 6*7") ||
		out.Choices[0].FinishReason != "stop" {
		t.Fatalf("chat completion body:\n%s", body)
	}
}

const serveConfig = "[llm]\nprovider = \"offline\"\nmodel = \"offline-large\"\n"

// startServe runs serve in process on a free port with the config text
// src, and returns its base URL, its start lines, all it wrote to stderr,
// the channel that signals it and the one its return comes on.
func startServe(t *testing.T, src string) (base string, log *strings.Builder, out *syncbuf.Buffer, sigs chan os.Signal, done chan error) {
	t.Helper()
	inv, err := parseWithConfig(newFlagSet("serve"), []string{"-c", writeConfig(t, src)}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	out = &syncbuf.Buffer{}
	sigs = make(chan os.Signal, 2)
	done = make(chan error, 1)
	go func() {
		done <- serveUntil(sigs, inv, "127.0.0.1:0", false, io.MultiWriter(pw, out))
		pw.Close()
	}()
	log = &strings.Builder{}
	return waitServing(t, pr, log), log, out, sigs, done
}

// TestServeUntilCancelled runs serve in process on a free port, calls it,
// then signals it, and checks that it says it drains and returns cleanly.
func TestServeUntilCancelled(t *testing.T) {
	for _, gw := range []string{"1", "0"} {
		t.Run("HOOKHOST_USE_GATEWAY="+gw, func(t *testing.T) {
			t.Setenv("HOOKHOST_USE_GATEWAY", gw)
			base, log, out, sigs, done := startServe(t, serveConfig)
			if want := map[string]string{"1": "route gateway", "0": "route bypass"}[gw]; !strings.Contains(log.String(), want+" (from HOOKHOST_USE_GATEWAY)") {
				t.Errorf("start line does not state the route:\n%s", log.String())
			}
			checkServes(t, base)
			sigs <- syscall.SIGTERM
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("serve returned %v after SIGTERM", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("serve did not return within a minute of SIGTERM")
			}
			if !strings.Contains(out.String(), "hookhost: draining up to 30s; signal again to stop now\n") {
				t.Fatalf("no drain line on stderr:\n%s", out.String())
			}
			if _, err := http.Get(base + "/healthz"); err == nil {
				t.Fatal("still answering after serve returned")
			}
		})
	}
}

// A second signal during the drain stops serve at once, cutting a request
// that would otherwise keep it draining for an hour.
func TestServeSecondSignalStopsNow(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	base, _, out, sigs, done := startServe(t, serveConfig+"[server]\ndrain_timeout = \"1h\"\nread_timeout = \"1h\"\n")

	// A request whose body never ends keeps the drain waiting.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	waitFor(t, "the request to be read", func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The body budget holds what arrived: the one byte sent.
		return strings.Contains(string(b), "hookhost_gateway_body_bytes_in_flight 1\n")
	})

	sigs <- syscall.SIGTERM
	waitFor(t, "the drain line", func() bool {
		return strings.Contains(out.String(), "hookhost: draining up to 1h0m0s; signal again to stop now")
	})
	sigs <- syscall.SIGINT
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after the second signal", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still draining 30s after the second signal:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "hookhost: stopping now") {
		t.Fatalf("nothing said about stopping now:\n%s", out.String())
	}
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeProcessStopsOnSIGTERM runs the real binary and stops it with
// SIGTERM: it exits 0.
func TestServeProcessStopsOnSIGTERM(t *testing.T) {
	cmd := exec.Command(hookhostBinary(t), "serve", "-listen", "127.0.0.1:0", "-c", writeConfig(t, serveConfig))
	cmd.Env = append(os.Environ(), "HOOKHOST_USE_GATEWAY=1")
	// A pipe of our own rather than StderrPipe: Wait then waits for the
	// copy, which the reader below keeps draining.
	stderr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var log strings.Builder
	base := waitServing(t, stderr, &log)
	checkServes(t, base)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		exited <- err
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM\n%s", err, log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve did not exit within a minute of SIGTERM\n%s", log.String())
	}
}

// serve on a port another process holds says where the address came from
// and suggests a port that is free on the same host.
func TestServeOnAPortInUse(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "")
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	suggestion := regexp.MustCompile(`; stop that process, or try -listen (127\.0\.0\.1:\d+)\n$`)
	cases := []struct {
		name string
		args []string
		from string
	}{
		{"from -listen", []string{"-c", writeConfig(t, serveConfig), "-listen", addr}, "(from -listen)"},
		{"from the file", []string{"-c", writeConfig(t, serveConfig+"\n[server]\nlisten = \""+addr+"\"\n")}, "(from server.listen at "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", append([]string{"serve"}, c.args...)...)
			prefix := "hookhost: serve: cannot listen on " + addr + " " + c.from
			if code != 1 || !strings.Contains(errOut, prefix) || !strings.Contains(errOut, "already in use") {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if c.name == "from the file" && !strings.Contains(errOut, "hookhost.toml:6)") {
				t.Errorf("the line of server.listen is not named:\n%s", errOut)
			}
			m := suggestion.FindStringSubmatch(errOut)
			if m == nil || m[1] == addr {
				t.Fatalf("no other port suggested:\n%s", errOut)
			}
			// The port was free when suggested; only another process
			// taking that very port in between could make this fail.
			ln, err := net.Listen("tcp", m[1])
			if err != nil {
				t.Fatalf("the suggested %s is not free: %v", m[1], err)
			}
			ln.Close()
			t.Logf("stderr:\n%s", errOut)
		})
	}
}

// The default address is named as the default when neither -listen nor
// the file sets it.
func TestAddressInUseNamesTheDefault(t *testing.T) {
	inv := &invocation{cfg: config.Default()}
	err := addressInUse(inv, "")
	if want := "serve: cannot listen on 127.0.0.1:8080 (the default; server.listen is not set): the address is already in use by another process; stop that process, or try -listen 127.0.0.1:"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want it to start with %q", err, want)
	}
}
