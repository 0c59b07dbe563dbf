//go:build unix

package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// maxFaultHeapGrowth is a generous bound on how much the host's heap may
// grow, over what it was before the fault, while a plugin misbehaves: a
// leak proportional to what the plugin sends (eight results of up to
// 64 MiB) or to time would cross it. Other tests run in parallel, hence the
// margin. RSS is only logged: the runtime returns freed memory to the OS
// lazily, and the race detector's shadow memory has no bound worth
// asserting.
const maxFaultHeapGrowth = 256 << 20

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) uint64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestPluginFaultMatrix makes one real plugin process misbehave in each of
// the ways a process can, beside a healthy one. For every fault: calls
// return by their deadline (falling through to the healthy plugin when the
// faulty one cannot answer), the healthy plugin keeps answering, the
// host's memory stays bounded, Close succeeds within its bound, and no
// process of the faulty plugin outlives the host.
func TestPluginFaultMatrix(t *testing.T) {
	t.Parallel()
	type fault struct {
		name string
		bin  string // the faulty plugin's binary; the echo plugin when empty
		// trigger makes the plugin at pid misbehave and returns the pids of
		// whatever it spawned.
		trigger func(t *testing.T, s *supervised, pid int, record string) []int
	}
	call := func(t *testing.T, s *supervised, tool string) {
		t.Helper()
		_, _ = callDirect(s, tool, "", 10*time.Second)
	}
	faults := []fault{
		{"stderr flood", "", func(t *testing.T, s *supervised, pid int, _ string) []int {
			mustCall(t, s, "flood", "", "flooding")
			return nil
		}},
		{"child spawned before dying", "", func(t *testing.T, s *supervised, pid int, record string) []int {
			call(t, s, "childexit")
			var kids []int
			waitFor(t, "the child to be recorded", func() bool { kids = pidsIn(record + ".childexit"); return len(kids) > 0 })
			// The plugin's process group goes with the plugin.
			waitFor(t, "the child of the dead plugin to be killed", func() bool { return gone(kids[0]) })
			return kids
		}},
		{"stops reading its socket", bins.deaf, func(t *testing.T, s *supervised, pid int, _ string) []int {
			mustCall(t, s, "deaf", "", "deaf from now on")
			// Enough to fill what the kernel buffers for the socket.
			big := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 1<<20))
			for i := range 3 {
				if _, err := callDirect(s, "lookup", big, 2*time.Second); err == nil {
					t.Fatalf("big call %d answered by a plugin that does not read", i)
				}
			}
			return nil
		}},
		{"stopped (SIGSTOP)", "", func(t *testing.T, s *supervised, pid int, _ string) []int {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"spinning the CPU", "", func(t *testing.T, s *supervised, pid int, _ string) []int {
			if _, err := callDirect(s, "spin", "", time.Second); err == nil {
				t.Fatal("spin answered")
			}
			return nil
		}},
	}
	overProtocols(t, func(t *testing.T, v int) {
		for _, f := range faults {
			t.Run(f.name, func(t *testing.T) {
				record := filepath.Join(os.Getenv(hangDirVar), fmt.Sprintf("faulty-%d", time.Now().UnixNano()))
				// The plugin records under its own name; give each row its own.
				name := filepath.Base(record)
				bin := f.bin
				if bin == "" {
					bin = bins.echo
				}
				faulty := pinned(entry(linkAs(t, bin, name)), v)
				faulty.Env = []string{hangDirVar}
				faulty.Timeout, faulty.ToolTimeout = time.Second, time.Second
				opts := fastOptions()
				h, errs := Start(context.Background(), Specs(configOf(plug{name, faulty}, plug{"witness", pinned(entry(echoAs(t, "witness")), v)})), opts)
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				wantProtocol(t, h, v)
				closed := false
				t.Cleanup(func() {
					if !closed {
						h.Close(context.Background())
					}
				})
				bus := busOf(t, h)
				s := memberOf(t, h, 0)
				pid := s.Status().PID
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				baseRSS := rssBytes(t)
				pids := append([]int{pid}, f.trigger(t, s, pid, record)...)
				t.Cleanup(func() {
					for _, p := range pids {
						syscall.Kill(p, syscall.SIGKILL)
					}
				})

				var peakHeap, peakRSS uint64
				for round := range 8 {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					r := bus.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{SessionID: "s", CallID: strconv.Itoa(round), Name: "lookup", Arguments: json.RawMessage("{}")})
					late := ctx.Err()
					cancel()
					if late != nil {
						t.Fatalf("round %d: the call did not return by its deadline", round)
					}
					if r == nil || (r.Plugin != "witness" && r.Plugin != name) {
						t.Fatalf("round %d: result %+v, want an answer from a plugin", round, r)
					}
					if w, err := callDirect(memberOf(t, h, 1), "lookup", "", 5*time.Second); err != nil || w == nil {
						t.Fatalf("round %d: the healthy plugin did not answer: %v", round, err)
					}
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					peakHeap = max(peakHeap, ms.HeapInuse)
					peakRSS = max(peakRSS, rssBytes(t))
					if st := s.Status(); st.PID != 0 && !slices.Contains(pids, st.PID) {
						pids = append(pids, st.PID) // a restarted process
					}
				}
				growth := int64(peakHeap) - int64(base.HeapInuse)
				t.Logf("heap in use %d MiB before the fault, peak %d MiB; RSS %d MiB before, peak %d MiB",
					base.HeapInuse>>20, peakHeap>>20, baseRSS>>20, peakRSS>>20)
				if growth > maxFaultHeapGrowth {
					t.Errorf("host heap grew by %d MiB during the fault, over %d MiB", growth>>20, maxFaultHeapGrowth>>20)
				}

				ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
				defer cancel()
				closed = true
				if err := h.Close(ctx); err != nil {
					t.Fatalf("Close: %v", err)
				}
				waitFor(t, "every process of the faulty plugin to be gone", func() bool {
					for _, p := range pids {
						if !gone(p) {
							return false
						}
					}
					return true
				})
			})
		}
	})
}
