package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// uEscaped writes every other character of s as a JSON \u escape, which a
// client decodes back into s.
func uEscaped(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i%2 == 0 {
			b.WriteString(`\u00` + string(hex[s[i]>>4]) + string(hex[s[i]&15]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The bypass route never hands the client the upstream key, whatever form
// the upstream echoes it in: error bodies (JSON, text, \u-escaped), a
// response header, an error event inside a stream.
func TestBypassNeverLeaksTheUpstreamKey(t *testing.T) {
	k := fakeapi.Quote(upstreamKey)
	replies := map[string]fakeapi.Reply{}
	for shape, body := range fakeapi.ErrorBodies(upstreamKey) {
		for _, status := range []int{400, 401, 429, 500} {
			replies[shape+" "+http.StatusText(status)] = fakeapi.JSON(status, body, "X-Echo", "Bearer "+upstreamKey)
		}
	}
	replies["escaped json error"] = fakeapi.JSON(401, `{"error":{"message":"Incorrect API key provided: `+uEscaped(upstreamKey)+`"}}`)
	replies["header on a 200"] = fakeapi.JSON(200, `{"id":"x"}`, "X-Echo", upstreamKey)
	replies["stream error event"] = fakeapi.SSE(fakeapi.Data(`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"}}]}`),
		fakeapi.Data(`{"error":{"message":`+k+`,"type":"invalid_request_error"}}`))
	replies["escaped stream error event"] = fakeapi.SSE(fakeapi.Data(`{"id":"c1","choices":[]}`),
		"event: error\ndata: {\"error\":{\"message\":\"key "+uEscaped(upstreamKey)+"\"}}\n\n")
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			fake := fakeapi.New(t, reply)
			s := newTest(t, bypassParts(t, "openai", fake.URL()+"/v1"))
			resp := post(t, s.url, "/v1/chat/completions", chatBody)
			body := readAll(t, resp)
			decoded := strings.NewReplacer(`\u00`, "").Replace(string(body))
			if strings.Contains(string(body), upstreamKey) || strings.Contains(string(body), uEscaped(upstreamKey)) || strings.Contains(decoded, "9b8a7c6d5e") {
				t.Errorf("the key is in the body: %s", body)
			}
			for h, vs := range resp.Header {
				for _, v := range vs {
					if strings.Contains(v, upstreamKey) {
						t.Errorf("the key is in header %s: %s", h, v)
					}
				}
			}
			if int64(len(body)) != resp.ContentLength && resp.ContentLength >= 0 {
				t.Errorf("Content-Length %d for a body of %d bytes", resp.ContentLength, len(body))
			}
		})
	}
}
