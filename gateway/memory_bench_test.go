package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/openai"
)

// manySmallMessages is a request body of n tiny alternating messages in
// the protocol of path, the shape that costs the most memory per byte.
func manySmallMessages(path string, n int) []byte {
	var b bytes.Buffer
	switch path {
	case "/v1/messages":
		b.WriteString(`{"model":"m1","max_tokens":16,"messages":[`)
	case "/v1/responses":
		b.WriteString(`{"model":"m1","input":[`)
	default:
		b.WriteString(`{"model":"m1","messages":[`)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if i == n-1 {
			role = "user"
		}
		fmt.Fprintf(&b, `{"role":"%s","content":"m%d"}`, role, i%10)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// BenchmarkManySmallMessages measures what a body of about a million tiny
// messages (31 MiB) costs on the gateway route, same protocol in and out
// (every message kept in its wire form and matched again on the way
// out): allocated-bytes/body-byte is all the request allocated in the
// process (the upstream's side of the test included) over the body's
// size, peak-heap/body-byte the largest live heap seen while it ran.
func BenchmarkManySmallMessages(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"chat", "/v1/chat/completions"},
		{"responses", "/v1/responses"},
		{"messages", "/v1/messages"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := manySmallMessages(tc.path, benchMessages)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/v1/messages":
					io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
				case "/v1/responses":
					io.WriteString(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m1","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)
				default:
					io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
				}
			}))
			defer up.Close()
			p := realParts()
			p.route = hooks.RouteGateway
			p.server.MaxBodySize = 64 << 20
			p.server.RequestTimeout = 5 * time.Minute
			var err error
			switch tc.path {
			case "/v1/messages":
				p.provider, err = anthropic.New(anthropic.Config{BaseURL: up.URL, APIKey: upstreamKey, Timeout: 5 * time.Minute})
			case "/v1/responses":
				p.provider, err = openai.New(openai.Config{BaseURL: up.URL + "/v1", APIKey: upstreamKey, API: openai.APIResponses, Timeout: 5 * time.Minute})
			default:
				p.provider, err = openai.New(openai.Config{BaseURL: up.URL + "/v1", APIKey: upstreamKey, Timeout: 5 * time.Minute})
			}
			if err != nil {
				b.Fatal(err)
			}
			s, err := newServer(p)
			if err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(s.Handler())
			defer hs.Close()

			stopSampling := samplePeak(20*time.Millisecond, func(m *runtime.MemStats) uint64 { return m.HeapAlloc })
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodPost, hs.URL+tc.path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("anthropic-version", "2023-06-01")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "ok") {
					b.Fatalf("%d %s", resp.StatusCode, got)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			peak := stopSampling()
			size := float64(len(body))
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "allocated-bytes/body-byte")
			b.ReportMetric(float64(peak-before.HeapAlloc)/size, "peak-heap/body-byte")
			b.ReportMetric(size/(1<<20), "body-MiB")
		})
	}
}

// benchMessages is how many messages BenchmarkManySmallMessages sends:
// about a million, 31 MiB of body.
var benchMessages = 1 << 20

// samplePeak reads the runtime's memory statistics every interval until the
// returned stop is called, and stop returns the largest value of what
// measure picks out of them.
func samplePeak(interval time.Duration, measure func(*runtime.MemStats) uint64) (stop func() uint64) {
	var peak uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, measure(&m))
		}
	}()
	return func() uint64 {
		close(done)
		<-sampled
		return peak
	}
}
