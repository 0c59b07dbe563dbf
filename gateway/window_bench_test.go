package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm/openai"
)

// streamGuardMiB is the size of the streamed answer of
// BenchmarkStreamGuard.
const streamGuardMiB = 48

// BenchmarkStreamGuard streams a 48 MiB answer (4 KiB deltas from an
// OpenAI Chat upstream) to a Chat Completions client through the gateway
// route with no guard, with a transform_llm_output guard declared windowed
// (4 KiB windows, 256 B overlap) and with the same guard undeclared, which
// makes the gateway hold the whole text. ttfb-ms is the time from the
// request to the client's first text, peak-heap-MiB the largest heap in
// use seen while it ran (sampled every 5 ms), alloc-MiB all the request
// allocated in the process, the upstream's side included.
func BenchmarkStreamGuard(b *testing.B) {
	delta := strings.Repeat("guarded text ", 4096/13) + "xyz\n"
	deltas := streamGuardMiB << 20 / len(delta)
	chunk := "data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"content":"` +
		strings.ReplaceAll(delta, "\n", `\n`) + `"},"finish_reason":null}]}` + "\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
		for range deltas {
			bw.WriteString(chunk)
		}
		bw.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		bw.Flush()
	}))
	defer up.Close()

	guard := func(opts map[hooks.Name]hooks.HookOptions) *hookbus.Bus {
		bus, err := hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{
			Name: "guard", HookOptions: opts,
			TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
				if strings.Contains(ev.Text, "sk-live-") {
					return &hooks.TextReplacement{Text: strings.ReplaceAll(ev.Text, "sk-live-", "[key]")}, nil
				}
				return nil, nil
			},
		}}}, hookbus.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { bus.Close(context.Background()) })
		return bus
	}
	for _, tc := range []struct {
		name string
		bus  func() *hookbus.Bus
	}{
		{"no-guard", func() *hookbus.Bus { return nil }},
		{"windowed-guard", func() *hookbus.Bus {
			return guard(map[hooks.Name]hooks.HookOptions{hooks.TransformLLMOutput: {WindowBytes: 4096, OverlapBytes: 256}})
		}},
		{"whole-text-hold", func() *hookbus.Bus { return guard(nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := realParts()
			p.route = hooks.RouteGateway
			p.bus = tc.bus()
			p.server.RequestTimeout = 10 * time.Minute
			var err error
			p.provider, err = openai.New(openai.Config{BaseURL: up.URL + "/v1", APIKey: upstreamKey, Timeout: 10 * time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			s, err := newServer(p)
			if err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(s.Handler())
			defer hs.Close()

			stopSampling := samplePeak(5*time.Millisecond, func(m *runtime.MemStats) uint64 { return m.HeapInuse })
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var ttfb time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				req, _ := http.NewRequest(http.MethodPost, hs.URL+"/v1/chat/completions",
					strings.NewReader(`{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				r := bufio.NewReaderSize(resp.Body, 64<<10)
				first := time.Duration(0)
				var n int64
				for {
					line, err := r.ReadSlice('\n')
					if first == 0 && strings.Contains(string(line), "guarded text") {
						first = time.Since(start)
					}
					n += int64(len(line))
					if err == io.EOF {
						break
					}
					if err != nil && err != bufio.ErrBufferFull {
						b.Fatal(err)
					}
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || first == 0 || n < streamGuardMiB<<20 {
					b.Fatalf("status %d, %d bytes, first text after %v", resp.StatusCode, n, first)
				}
				ttfb += first
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			peak := stopSampling()
			b.ReportMetric(float64(ttfb.Milliseconds())/float64(b.N), "ttfb-ms")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB")
		})
	}
}
