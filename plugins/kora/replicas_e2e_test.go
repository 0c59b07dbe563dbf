//go:build linux

package main

// Several `hookhost serve` processes, each running its own Kora, share one
// PostgreSQL ledger: the deployment the README recommends for gateway
// replicas. Requests spread over them concurrently must each leave exactly
// one inference in the ledger, and a burn report over it must sum them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/pgtest"
)

// replica is one running `hookhost serve` process.
type replica struct {
	url    string
	cmd    *exec.Cmd
	log    *syncbuf.Buffer
	exited chan error
	// stopped is set once stop has seen the process exit.
	stopped bool
}

var servingOn = regexp.MustCompile(`hookhost: serving on (http://\S+)`)

// delivered matches the decision log's line for a post_llm_call event
// delivered to Kora, capturing its session.
var delivered = regexp.MustCompile(`kora post_llm_call → delivered .* input \{"session_id":"([^"]+)"`)

// startReplica runs bin as `serve -c config` on a free loopback port with
// env added to the test's environment, and returns once it serves.
func startReplica(t *testing.T, bin, config string, env ...string) *replica {
	t.Helper()
	r := &replica{log: &syncbuf.Buffer{}, exited: make(chan error, 1)}
	r.cmd = exec.Command(bin, "serve", "-v", "-c", config, "-listen", "127.0.0.1:0")
	r.cmd.Env = append(os.Environ(), env...)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			r.log.Write([]byte(sc.Text() + "\n"))
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pipe)
		r.exited <- r.cmd.Wait()
	}()
	t.Cleanup(func() {
		// A test that failed before stopping it leaves it running.
		if !r.stopped {
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	})
	select {
	case r.url = <-addr:
	case err := <-r.exited:
		r.stopped = true // its exit is taken: the cleanup must not wait for it again
		t.Fatalf("hookhost serve exited before serving (%v):\n%s", err, r.log.String())
	case <-time.After(time.Minute):
		t.Fatalf("hookhost serve did not say where it serves within a minute:\n%s", r.log.String())
	}
	return r
}

// stop sends SIGTERM and expects a clean exit once the drain is over.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to hookhost serve: %v", err)
	}
	select {
	case err := <-r.exited:
		r.stopped = true
		if err != nil {
			t.Fatalf("hookhost serve exited with %v after SIGTERM:\n%s", err, r.log.String())
		}
	case <-time.After(time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.exited
		r.stopped = true
		t.Fatalf("hookhost serve still running a minute after SIGTERM:\n%s", r.log.String())
	}
}

func TestServeReplicasShareOnePostgresLedger(t *testing.T) {
	const replicas, requests = 3, 30

	cluster, err := pgtest.Start("")
	if err != nil {
		pgtest.Require(t, err)
	}
	t.Cleanup(func() { cluster.Close() })
	dsn := cluster.NewDatabase(t)

	bins := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bins, "hookhost"), "../../cmd/hookhost").CombinedOutput(); err != nil {
		t.Fatalf("building hookhost: %v\n%s", err, out)
	}
	// Each replica has a state directory of its own, as on separate
	// machines: the database is all they share.
	var servers []*replica
	for range replicas {
		dir := t.TempDir()
		config := filepath.Join(dir, "hookhost.toml")
		src := fmt.Sprintf(`
[llm]
provider = "offline"
model = "offline-large"
[routing]
gateway = true
[plugins]
enabled = ["kora"]
dir = %q
[plugins.entries.kora]
env = ["KORA_LEDGER_DSN"]
[plugins.entries.kora.config]
state_dir = %q
[plugins.entries.kora.config.ledger]
dsn_env = "KORA_LEDGER_DSN"
`, pluginDir, filepath.Join(dir, "state"))
		if err := os.WriteFile(config, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, startReplica(t, filepath.Join(bins, "hookhost"), config,
			"KORA_LEDGER_DSN="+dsn, "HOOKHOST_USE_GATEWAY=1"))
	}

	// All requests at once, dealt round-robin over the replicas.
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for i := range requests {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"offline-large","messages":[{"role":"user","content":"hello number %d"}]}`, i)
			resp, err := http.Post(servers[i%replicas].url+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- fmt.Errorf("request %d: %w", i, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("request %d to replica %d: %d %s", i, i%replicas, resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		for i, s := range servers {
			t.Logf("replica %d log:\n%s", i, s.log.String())
		}
		t.FailNow()
	}
	// A clean stop drains each host, so every record its Kora was sent is
	// in the ledger by the time the process has exited.
	for _, s := range servers {
		s.stop(t)
	}
	// Which sessions each replica's Kora was sent, from its decision log:
	// every replica must have served its share, so three writers wrote.
	sentBy := map[string]int{}
	for i, s := range servers {
		log := s.log.String()
		got := delivered.FindAllStringSubmatch(log, -1)
		if len(got) != requests/replicas {
			t.Errorf("replica %d sent Kora %d post_llm_call events, want %d:\n%s", i, len(got), requests/replicas, log)
		}
		for _, m := range got {
			sentBy[m[1]] = i
		}
		if strings.Contains(log, "[ERROR]") {
			t.Errorf("replica %d logged an error:\n%s", i, log)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Kora's own export reads the shared ledger.
	cmd := exec.Command(filepath.Join(pluginDir, "kora"), "export", "-dsn", dsn, "-stream", "inferences")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kora export: %v\n%s", err, stderr.String())
	}
	var exported []ledger.Inference
	var inputTokens, outputTokens, costNano int64
	seen := map[string]int{}
	for line := range strings.Lines(out.String()) {
		var rec ledger.Inference
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("kora export line %q: %v", line, err)
		}
		exported = append(exported, rec)
		inputTokens += int64(rec.InputTokens)
		outputTokens += int64(rec.OutputTokens)
		costNano += ledger.NanoUSD(rec.CostUSD)
		seen[rec.SessionID]++
		if _, ok := sentBy[rec.SessionID]; !ok {
			t.Errorf("the ledger holds an inference of session %q, which no replica sent Kora", rec.SessionID)
		}
	}
	if len(exported) != requests {
		t.Fatalf("the shared ledger holds %d inferences, want exactly %d (one per request):\n%s", len(exported), requests, out.String())
	}
	// Each request is its own gateway session: a record written twice
	// would show as a session with two inferences.
	for id, n := range seen {
		if id == "" || n != 1 {
			t.Fatalf("session %q has %d inferences in the ledger, want 1 per request:\n%s", id, n, out.String())
		}
	}

	// The burn report sums the same ledger from its daily totals.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := ledger.Open(ctx, ledger.Options{DSN: dsn, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	groups, err := st.Burn(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var burn ledger.Totals
	for _, g := range groups {
		burn.Inferences += g.Inferences
		burn.InputTokens += g.InputTokens
		burn.OutputTokens += g.OutputTokens
		burn.CostNanoUSD += g.CostNanoUSD
	}
	want := ledger.Totals{Inferences: requests, InputTokens: inputTokens, OutputTokens: outputTokens, CostNanoUSD: costNano}
	if burn != want || inputTokens == 0 {
		t.Fatalf("burn over the shared ledger = %+v, want %+v (the exported records' sums)", burn, want)
	}
	t.Logf("%d replicas, %d requests: %d inferences, %d input and %d output tokens, $%.6f",
		replicas, requests, burn.Inferences, burn.InputTokens, burn.OutputTokens, ledger.USD(burn.CostNanoUSD))
}
