package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/internal/telemetry"
)

// BenchmarkGatewayTelemetry is one small request through the gateway route
// with one remote plugin, with OpenTelemetry off and on. On, spans (the
// request's, the model call's and one per hook call) are exported over
// OTLP/HTTP to a receiver in this process that reads and drops them, so
// the difference is what tracing costs a request, export included.
func BenchmarkGatewayTelemetry(b *testing.B) {
	up := fakeUpstream(b)
	root, h := serveGateway(b, up.url, true, true)
	var exports atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(receiver.Close)
	for _, on := range []bool{false, true} {
		name := "otel=off"
		if on {
			name = "otel=on"
		}
		b.Run(name, func(b *testing.B) {
			if on {
				// The exporter reads the standard variables itself.
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
				shutdown, err := telemetry.Setup(context.Background(), os.Getenv, "bench", false)
				if err != nil {
					b.Fatal(err)
				}
				defer func() {
					if err := shutdown(context.Background()); err != nil {
						b.Fatalf("flushing the spans: %v", err)
					}
					if exports.Load() == 0 {
						b.Fatal("tracing was on, but no span reached the receiver")
					}
				}()
				if !telemetry.Enabled() {
					b.Fatal("telemetry.Setup left tracing off")
				}
			}
			if s := measure(b, up, root, 1); s.errors > 0 {
				b.Fatalf("%d of %d requests failed; the first: %v", s.errors, b.N, s.firstErr)
			}
			pluginAsked(b, h, b.N)
		})
	}
}
