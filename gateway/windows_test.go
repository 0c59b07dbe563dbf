package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oairesponses "github.com/openai/openai-go/v3/responses"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// The windowed guards run in a real plugin process (internal/windowplugin,
// over protocol v1 and v2) behind each streamed endpoint, in front of a
// fake OpenAI upstream: the plugin redacts "SECRET-" and 12 characters,
// stops the answer at "FORBIDDEN", and asks for a reissue when the first
// 32 bytes of an answer contain "I think maybe".

const (
	windowBytes  = 64
	overlapBytes = 24
	hedge        = "I think maybe"
	stopNote     = "[stopped by windowguard]"
)

// windowEndpoint is one streamed endpoint of the gateway, read through its
// official Go SDK's accumulator.
type windowEndpoint struct {
	name, path, body string
	// sdk returns the accumulated answer's text and how it ended.
	sdk func(ctx context.Context, base string) (text, stop string, err error)
	// end is the raw stream's last frame.
	end string
	// refused is how the SDK reports a stopped answer.
	refused string
}

var windowEndpoints = []windowEndpoint{
	{
		name: "chat", path: "/v1/chat/completions",
		body: `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
		sdk: func(ctx context.Context, base string) (string, string, error) {
			client := openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
			stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			acc := openai.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				return "", "", err
			}
			if len(acc.Choices) != 1 {
				return "", "", fmt.Errorf("%d choices", len(acc.Choices))
			}
			return acc.Choices[0].Message.Content, acc.Choices[0].FinishReason, nil
		},
		end: "data: [DONE]", refused: "content_filter",
	},
	{
		name: "messages", path: "/v1/messages",
		body: `{"model":"gpt-test","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		sdk: func(ctx context.Context, base string) (string, string, error) {
			client := anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
			stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
				Model: "gpt-test", MaxTokens: 1024,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
			})
			acc := anthropic.Message{}
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					return "", "", err
				}
			}
			if err := stream.Err(); err != nil {
				return "", "", err
			}
			var text strings.Builder
			for _, b := range acc.Content {
				if b.Type == "text" {
					text.WriteString(b.Text)
				}
			}
			return text.String(), string(acc.StopReason), nil
		},
		end: `"type":"message_stop"`, refused: "refusal",
	},
	{
		name: "responses", path: "/v1/responses",
		body: `{"model":"gpt-test","stream":true,"input":"hi"}`,
		sdk: func(ctx context.Context, base string) (string, string, error) {
			client := openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
			stream := client.Responses.NewStreaming(ctx, oairesponses.ResponseNewParams{
				Model: "gpt-test", Input: oairesponses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
			})
			var resp *oairesponses.Response
			var deltas strings.Builder
			for stream.Next() {
				switch ev := stream.Current(); ev.Type {
				case "response.output_text.delta":
					deltas.WriteString(ev.Delta)
				case "response.completed", "response.incomplete":
					r := ev.Response
					resp = &r
				}
			}
			if err := stream.Err(); err != nil {
				return "", "", err
			}
			if resp == nil {
				return "", "", fmt.Errorf("the stream ended without response.completed or response.incomplete")
			}
			if got := resp.OutputText(); got != deltas.String() {
				return "", "", fmt.Errorf("the final response's text %q is not its deltas' %q", got, deltas.String())
			}
			stop := string(resp.Status)
			if resp.IncompleteDetails.Reason != "" {
				stop += "/" + string(resp.IncompleteDetails.Reason)
			}
			return resp.OutputText(), stop, nil
		},
		end: `"type":"response.`, refused: "incomplete/content_filter",
	},
}

// windowScenario is one answer of the upstream and what the client must get.
type windowScenario struct {
	name    string
	replies func(gate chan struct{}) []fakeapi.Reply
	want    string // the client's text
	stop    string // "refused", or "" for a normal end
	gated   bool   // the test reads the first text, then opens the gate
	rounds  int    // upstream requests
}

func filler(n int, seed string) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(seed)
	}
	return b.String()[:n]
}

func windowScenarios() []windowScenario {
	// The secret starts 60 bytes in: the first window (64 bytes or a
	// little more, as the 7-byte deltas fall) ends inside it, so it is
	// whole only in the next window, whose first 24 bytes are the first
	// window's held-back end.
	secretText := filler(60, "abcdefghij ") + "SECRET-abcdefABCDEF and more text " + filler(120, "klmnop ")
	stopText := filler(150, "qrstu ") + " FORBIDDEN " + filler(200, "vwxyz ")
	long := filler(600, "streamed text, ")
	reissued := "The answer is 42, said plainly."
	plain := "The answer is 43, plainly, with no hedge in its opening at all."
	return []windowScenario{
		{name: "secret split across windows", rounds: 1,
			replies: func(chan struct{}) []fakeapi.Reply {
				return []fakeapi.Reply{fakeapi.SSE(fakeapi.ChatText(secretText, 7)...)}
			},
			want: strings.Replace(secretText, "SECRET-abcdefABCDEF", "[redacted]", 1)},
		{name: "stop", rounds: 1, stop: "refused",
			replies: func(chan struct{}) []fakeapi.Reply {
				return []fakeapi.Reply{fakeapi.SSE(fakeapi.ChatText(stopText, 9)...)}
			},
			want: stopText[:strings.Index(stopText, "FORBIDDEN")]},
		{name: "first text before the answer is whole", rounds: 1, gated: true,
			replies: func(gate chan struct{}) []fakeapi.Reply {
				frames := fakeapi.ChatText(long, 10)
				return []fakeapi.Reply{fakeapi.Gated(gate, frames[:25], frames[25:])}
			},
			want: long},
		{name: "reissue decided on the opening", rounds: 2,
			replies: func(chan struct{}) []fakeapi.Reply {
				return []fakeapi.Reply{
					fakeapi.SSE(fakeapi.ChatText(hedge+" the answer is 42, but I am not sure of it at all, sorry.", 6)...),
					fakeapi.SSE(fakeapi.ChatText(reissued, 6)...),
				}
			},
			want: reissued},
		{name: "opening passes", rounds: 1,
			replies: func(chan struct{}) []fakeapi.Reply {
				return []fakeapi.Reply{fakeapi.SSE(fakeapi.ChatText(plain, 6)...)}
			},
			want: plain},
	}
}

type seenCall struct {
	Hook     string `json:"hook"`
	Text     string `json:"text"`
	Windowed bool   `json:"windowed"`
	Offset   int64  `json:"offset"`
	Overlap  int64  `json:"overlap"`
	Last     bool   `json:"last"`
	Partial  bool   `json:"partial"`
	Model    string `json:"model"`
}

func readSeen(t *testing.T, path string) []seenCall {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []seenCall
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var c seenCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("seen file line %q: %v", line, err)
		}
		out = append(out, c)
	}
	return out
}

func TestWindowedGuards(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "windowguard")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/windowplugin").CombinedOutput(); err != nil {
		t.Fatalf("building the window plugin: %v\n%s", err, out)
	}
	for _, proto := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", proto), func(t *testing.T) {
			seenFile := filepath.Join(t.TempDir(), "seen.jsonl")
			t.Setenv("SEEN_FILE", seenFile)
			t.Setenv("WINDOW_BYTES", fmt.Sprint(windowBytes))
			t.Setenv("OVERLAP_BYTES", fmt.Sprint(overlapBytes))
			t.Setenv("REISSUE_ON", hedge)
			// The upstream answers each request with the next reply the
			// running scenario queued, so that any subset of them runs.
			var (
				mu    sync.Mutex
				queue []fakeapi.Reply
			)
			replies := make([]fakeapi.Reply, 200)
			for i := range replies {
				replies[i] = func(w http.ResponseWriter, r fakeapi.Seen) {
					mu.Lock()
					if len(queue) == 0 {
						mu.Unlock()
						http.Error(w, "no reply queued", 500)
						return
					}
					next := queue[0]
					queue = queue[1:]
					mu.Unlock()
					next(w, r)
				}
			}
			fake := fakeapi.New(t, replies...)
			_, url := hostServer(t, upstreamConfig(fake.URL()+"/v1", true)+fmt.Sprintf(`
[plugins]
enabled = ["windowguard"]
[plugins.entries.windowguard]
path = %q
protocol = %d
env = ["SEEN_FILE", "WINDOW_BYTES", "OVERLAP_BYTES", "REISSUE_ON"]
`, bin, proto))
			requests := 0
			for _, ep := range windowEndpoints {
				for _, sc := range windowScenarios() {
					t.Run(ep.name+"/"+sc.name, func(t *testing.T) {
						os.Remove(seenFile)
						// Once for the SDK, once for the raw bytes.
						g := []chan struct{}{make(chan struct{}), make(chan struct{})}
						mu.Lock()
						queue = append(sc.replies(g[0]), sc.replies(g[1])...)
						mu.Unlock()
						close(g[0]) // the SDK's run is not the gated check
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
						defer cancel()
						text, stop, err := ep.sdk(ctx, url)
						if err != nil {
							t.Fatalf("through the SDK: %v", err)
						}
						checkWindowAnswer(t, sc, ep, text, stop)
						seen := readSeen(t, seenFile)
						checkSeen(t, sc, seen)

						raw := rawWindowStream(t, url, ep, sc, g[1])
						if !strings.Contains(lastFrame(raw), ep.end) {
							t.Errorf("the raw stream ends with %q, want %s:\n%s", lastFrame(raw), ep.end, raw)
						}
						requests += 2 * sc.rounds
						if got := len(fake.Requests()); got != requests {
							t.Fatalf("the upstream got %d requests so far, want %d", got, requests)
						}
						if sc.rounds == 2 {
							rs := fake.Requests()
							if second := rs[len(rs)-1]; !strings.Contains(string(second.Body), `"gpt-careful"`) {
								t.Errorf("the reissue went upstream without the plugin's model:\n%s", second.Body)
							}
						}
					})
				}
			}
		})
	}
}

func checkWindowAnswer(t *testing.T, sc windowScenario, ep windowEndpoint, text, stop string) {
	t.Helper()
	if sc.stop == "refused" {
		if stop != ep.refused {
			t.Errorf("stop %q, want %q", stop, ep.refused)
		}
		released, ok := strings.CutSuffix(text, stopNote)
		if !ok || !strings.HasPrefix(sc.want, released) {
			t.Errorf("a stopped answer's text is %q; want part of what came before the stop word, then %q", text, stopNote)
		}
		return
	}
	if stop == ep.refused {
		t.Errorf("stop %q for an answer nobody stopped", stop)
	}
	if text != sc.want {
		t.Errorf("the client's text\n %q\nwant\n %q", text, sc.want)
	}
}

func checkSeen(t *testing.T, sc windowScenario, seen []seenCall) {
	t.Helper()
	var windows, openings []seenCall
	for _, c := range seen {
		switch c.Hook {
		case "transform_llm_output":
			if !c.Windowed {
				t.Errorf("transform_llm_output was asked on a whole text, not a window: %+v", c)
			}
			windows = append(windows, c)
		case "post_llm_call_can_reissue":
			openings = append(openings, c)
		}
	}
	if len(openings) == 0 || !openings[0].Partial || len(openings[0].Text) < 32 || len(openings[0].Text) > 32+10 {
		t.Errorf("the reissue hook was not asked on a 32-byte opening: %+v", openings)
	}
	if sc.rounds == 2 && len(openings) != 1 {
		t.Errorf("a reissued call was offered for reissue again: %+v", openings)
	}
	for i, w := range windows {
		if w.Overlap > int64(overlapBytes)+3 || len(w.Text) > 2*windowBytes || (i > 0 && w.Overlap == 0 && !strings.Contains(sc.name, "stop")) {
			t.Errorf("window %d breaks the declared sizes: %+v", i, w)
		}
	}
	if sc.name == "secret split across windows" {
		split, whole := false, false
		for _, w := range windows {
			if strings.Contains(w.Text, "SECRET-") && !strings.Contains(w.Text, "SECRET-abcdefABCDEF") {
				split = true
			}
			if strings.Contains(w.Text, "SECRET-abcdefABCDEF") && w.Overlap > 0 && strings.Index(w.Text, "SECRET-") < int(w.Overlap) {
				whole = true
			}
		}
		if !split || !whole {
			t.Errorf("the secret was not split across windows and seen whole in the overlap (split %v, whole %v): %+v", split, whole, windows)
		}
	}
	if n := len(windows); n > 0 && !windows[n-1].Last && sc.stop == "" {
		t.Errorf("the last window is not marked last: %+v", windows[n-1])
	}
}

// rawWindowStream posts the scenario's request and reads the raw stream;
// for a gated scenario it opens the gate only once the client has read
// some of the answer's text, which the upstream cannot have finished.
func rawWindowStream(t *testing.T, url string, ep windowEndpoint, sc windowScenario, gate chan struct{}) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+ep.path, strings.NewReader(ep.body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var raw strings.Builder
	r := bufio.NewReader(resp.Body)
	if sc.gated {
		// The first text the client can get: "streamed text" (13 bytes of
		// the first window's released part).
		for !strings.Contains(raw.String(), "streamed text") {
			line, err := r.ReadString('\n')
			raw.WriteString(line)
			if err != nil {
				t.Fatalf("the stream ended before any text while the upstream was still answering: %v\n%s", err, raw.String())
			}
		}
	}
	close(gate)
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(rest)
	return raw.String()
}

func lastFrame(raw string) string {
	frames := strings.Split(strings.TrimSpace(raw), "\n\n")
	return frames[len(frames)-1]
}
