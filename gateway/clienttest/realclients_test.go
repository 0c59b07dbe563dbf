package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
	"github.com/hookhost/hookhost/internal/streamcheck"
)

// realClient is one row of the real-client table: an agent client (an
// SDK, a framework or a framework's model class) and the API it speaks.
// Adding a client is one entry here and, for an npm client, one function
// in agents.mjs' clients; a Go client gives run instead.
type realClient struct {
	Name string // as agents.mjs names it, or the Go client's name
	API  string // chat, responses or messages
	Note string // how it continues a conversation, for the table
	run  func(ctx context.Context, c clientCase) caseResult
	// usageFromStart: streamed, the client takes input tokens from
	// message_start alone and adds message_start's output tokens to
	// message_delta's, as LangChain's ChatAnthropic does against
	// Anthropic itself. message_start can carry only the first round's
	// count, so that is what such a client can see of the input, and its
	// output may be one over.
	usageFromStart bool
	// sampling: the client sends top_p, user and, where its API has
	// them, stop (stop_sequences) and seed; each must reach the upstream,
	// mapped to the upstream's own field where it has one.
	sampling bool
}

var realClients = []realClient{
	{Name: "openai/chat", API: chat, Note: "openai (npm), chat.completions; stream: .stream().finalChatCompletion()"},
	{Name: "openai/responses", API: responses, Note: "openai (npm), responses; history: input + response.output"},
	{Name: "anthropic/messages", API: messages, Note: "@anthropic-ai/sdk; stream: .stream().finalMessage()"},
	{Name: "openai/chat+sampling", API: chat, Note: "openai (npm) with top_p, seed, stop, user", sampling: true},
	{Name: "openai/responses+sampling", API: responses, Note: "openai (npm) with top_p, user", sampling: true},
	{Name: "anthropic/messages+sampling", API: messages, Note: "@anthropic-ai/sdk with top_p, stop_sequences, metadata.user_id", sampling: true},
	{Name: "ai/openai-responses", API: responses, Note: "ai + @ai-sdk/openai openai(model) (Responses, store on); history: response.messages"},
	{Name: "ai/openai-chat", API: chat, Note: "ai + @ai-sdk/openai openai.chat(model); history: response.messages"},
	{Name: "ai/anthropic", API: messages, Note: "ai + @ai-sdk/anthropic; history: response.messages"},
	{Name: "langchain/openai", API: chat, Note: "@langchain/openai ChatOpenAI, LangGraph ToolNode; stream: chunks concatenated"},
	{Name: "langchain/anthropic", API: messages, Note: "@langchain/anthropic ChatAnthropic, LangGraph ToolNode", usageFromStart: true},
	{Name: "agents/responses", API: responses, Note: "@openai/agents OpenAIResponsesModel, zod tool; history: result.history"},
	{Name: "agents/responses-chained", API: responses, Note: "@openai/agents OpenAIResponsesModel; next turn: previousResponseId"},
	{Name: "agents/chat", API: chat, Note: "@openai/agents OpenAIChatCompletionsModel, zod tool (strict)"},
	{Name: "openai-go/chat", API: chat, Note: "openai-go/v3 ChatCompletionAccumulator; history: Message.ToParam()", run: openaiGoChat},
	{Name: "openai-go/responses", API: responses, Note: "openai-go/v3 README samples: previous_response_id", run: openaiGoResponses},
	{Name: "anthropic-go/messages", API: messages, Note: "anthropic-sdk-go/v2 Message.Accumulate; history: Message.ToParam()", run: anthropicGoMessages},
}

// The tasks every client runs, each a conversation of one or two turns.
var tasks = []struct{ Name, Title string }{
	{"plugin", "plugin tool"},
	{"client_tool", "client tool"},
	{"two_turns", "two turns"},
}

// The upstreams every client runs on: the offline model and a fake model
// of each protocol (so each client meets its own protocol once and the
// other two across).
var upstreamNames = []string{"offline", chat, responses, messages}

// clientCase is one conversation: a client, streamed or not, a task, and
// the hookhost it talks to.
type clientCase struct {
	ID     string `json:"id"`
	Client string `json:"client"`
	Stream bool   `json:"stream"`
	Base   string `json:"base"`
	Key    string `json:"key"`
	Model  string `json:"model"`
	Task   string `json:"task"`
}

// turn is one model response as the client saw it.
type turn struct {
	Text  string `json:"text"`
	Calls []call `json:"calls"`
	In    int    `json:"in"`
	Out   int    `json:"out"`
}

// caseResult is what a conversation gave: its turns, the error that ended
// it, and every HTTP exchange the client made.
type caseResult struct {
	ID        string        `json:"id"`
	Turns     []turn        `json:"turns"`
	Error     *clientError  `json:"error"`
	Exchanges []rawExchange `json:"exchanges"`
}

// clientError is what a client threw: its class, the HTTP status when it
// had one, its message and the body of the answer it failed on.
type clientError struct {
	Class   string `json:"class"`
	Status  any    `json:"status"`
	Message string `json:"message"`
	Body    string `json:"body"`
}

// rawExchange is one HTTP request a client made and the answer it got,
// the body one char per byte.
type rawExchange struct {
	URL     string  `json:"url"`
	Request *string `json:"request"`
	Status  int     `json:"status"`
	CType   string  `json:"ctype"`
	Body    string  `json:"body"`
}

// TestRealClients runs every client × stream × task on every upstream,
// each on one hookhost serve per upstream, and writes the result table
// (to the test log, and to $CLIENTTEST_TABLE when set).
func TestRealClients(t *testing.T) {
	needClients(t)
	tbl := &table{cells: map[string]cell{}}
	t.Run("upstream", func(t *testing.T) {
		for _, up := range upstreamNames {
			t.Run(up, func(t *testing.T) {
				t.Parallel()
				runUpstream(t, up, tbl)
			})
		}
	})
	out := tbl.render()
	t.Logf("real-client results:\n%s", out)
	if path := os.Getenv("CLIENTTEST_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Errorf("writing the table: %v", err)
		}
	}
}

// runUpstream starts hookhost serve on upstream up and runs every case
// against it: the npm clients' cases in one node process, the Go
// clients' in goroutines, all at once.
func runUpstream(t *testing.T, up string, tbl *table) {
	var gw *servetest.Server
	model := "offline-large"
	if up == "offline" {
		gw = serve(t, "[llm]\nprovider = \"offline\"\nmodel = \"offline-large\"\n"+plugins(), true)
	} else {
		fake := newModelUpstream(t, up)
		gw = serve(t, config(fake), true)
		model = models[up]
	}
	var cases []clientCase
	var node []clientCase
	for _, cl := range realClients {
		for _, stream := range []bool{false, true} {
			for _, task := range tasks {
				c := clientCase{ID: fmt.Sprintf("%s/%s/%s", cl.Name, mode(stream), task.Name), Client: cl.Name, Stream: stream, Base: gw.URL, Key: clientKey, Model: model, Task: task.Name}
				cases = append(cases, c)
				if cl.run == nil {
					node = append(node, c)
				}
			}
		}
	}
	results := map[string]caseResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, cl := range realClients {
		if cl.run == nil {
			continue
		}
		for _, c := range cases {
			if c.Client != cl.Name {
				continue
			}
			wg.Go(func() {
				r := cl.run(ctx, c)
				r.ID = c.ID
				mu.Lock()
				results[c.ID] = r
				mu.Unlock()
			})
		}
	}
	nodeResults, nodeErr := runAgents(ctx, node)
	wg.Wait()
	if nodeErr != nil {
		t.Errorf("node agents.mjs: %v", nodeErr)
	}
	for _, r := range nodeResults {
		results[r.ID] = r
	}
	for _, cl := range realClients {
		for _, stream := range []bool{false, true} {
			for _, task := range tasks {
				id := fmt.Sprintf("%s/%s/%s", cl.Name, mode(stream), task.Name)
				t.Run(id, func(t *testing.T) {
					r, ok := results[id]
					var problems []string
					if !ok {
						problems = []string{"no result (the client's process failed)"}
					} else {
						problems = assess(up, cl, stream, task.Name, r)
					}
					tbl.record(cl, stream, up, task.Name, problems)
					for _, p := range problems {
						t.Error(p)
					}
				})
			}
		}
	}
}

// refusesStop reports whether cl's requests carry stop sequences to a
// Responses upstream, whose API has none.
func refusesStop(up string, cl realClient) bool {
	return cl.sampling && up == responses && cl.API != responses
}

func mode(stream bool) string {
	if stream {
		return "stream"
	}
	return "create"
}

// runAgents runs cases through agents.mjs in one node process.
func runAgents(ctx context.Context, cases []clientCase) ([]caseResult, error) {
	if len(cases) == 0 {
		return nil, nil
	}
	in, err := json.Marshal(cases)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hookhost-agents")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	outPath := filepath.Join(dir, "out.json")
	cmd := exec.CommandContext(ctx, "node", "agents.mjs", outPath)
	cmd.Env = append(environ(), "OPENAI_AGENTS_DISABLE_TRACING=1")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(outPath)
	if err != nil {
		return nil, fmt.Errorf("no results: %v\n%s", err, stderr.String())
	}
	var out []caseResult
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("results that are not JSON: %v", err)
	}
	return out, nil
}

// assess checks one conversation against what the task must give on
// upstream up, and returns what is wrong, the first problem the one the
// table shows.
func assess(up string, cl realClient, stream bool, task string, r caseResult) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if refusesStop(up, cl) {
		// A Responses upstream has no stop sequences, and leaving them
		// out would let the model write past them: the one refusal the
		// sampling rows must meet, on the first request, naming stop.
		if r.Error == nil || len(r.Turns) != 0 || !strings.Contains(r.Error.Message+r.Error.Body, `stop cannot be honoured`) {
			bad("turn 1: want a 400 naming stop, which a Responses upstream cannot honour; got turns %+v, error %+v", r.Turns, r.Error)
		}
		return problems
	}
	if r.Error != nil {
		msg := oneLine(r.Error.Message)
		body := r.Error.Body
		if n := len(r.Exchanges); body == "" && n > 0 && r.Exchanges[n-1].Status != 200 {
			body = r.Exchanges[n-1].Body
		}
		if body != "" && !strings.Contains(msg, oneLine(body)) {
			msg += " — body: " + oneLine(body)
		}
		bad("turn %d: the client threw %s (status %v): %s", len(r.Turns)+1, r.Error.Class, r.Error.Status, msg)
		return problems
	}
	for i, ex := range r.Exchanges {
		if ex.Status != 200 {
			bad("request %d got %d: %s", i+1, ex.Status, oneLine(ex.Body))
		}
		if stream && !strings.HasPrefix(ex.CType, "text/event-stream") {
			bad("request %d asked for a stream and got Content-Type %q", i+1, ex.CType)
		}
		if task == "plugin" && strings.Contains(ex.Body, callMarkers[cl.API]) {
			bad("request %d: the plugin's tool call reached the client", i+1)
		}
		if stream && ex.Status == 200 {
			if err := streamRules(cl.API, ex.Request, []byte(ex.Body)); err != nil {
				bad("request %d: the stream breaks what the SDKs rely on: %v", i+1, err)
			}
		}
	}
	fake := up != "offline"
	usage := func(i int, tr turn, in, out int) {
		if !fake {
			if tr.In <= 0 || tr.Out <= 0 {
				bad("turn %d: usage %d in / %d out, want both counted", i+1, tr.In, tr.Out)
			}
			return
		}
		if cl.usageFromStart && stream && up != messages && tr.Text != "" {
			// An OpenAI upstream reports usage only at the end of a
			// round, and message_start goes out before the first text:
			// a round that streams text opens with hookhost's estimate
			// (never 0). A round of tool calls shows no text first, and
			// its real count is announced.
			if tr.In <= 0 || tr.Out < out {
				bad("turn %d: usage %d in / %d out, want an estimate above 0 / at least %d", i+1, tr.In, tr.Out, out)
			}
			return
		}
		if cl.usageFromStart && stream {
			if tr.In != modelIn || tr.Out < out || tr.Out > out+1 {
				bad("turn %d: usage %d in / %d out, want %d (the first round's, from message_start) / %d (+1 from message_start)", i+1, tr.In, tr.Out, modelIn, out)
			}
			return
		}
		if tr.In != in || tr.Out != out {
			bad("turn %d: usage %d in / %d out, want %d / %d (every upstream round summed)", i+1, tr.In, tr.Out, in, out)
		}
	}
	want := map[string]int{"plugin": 1, "client_tool": 2, "two_turns": 2}[task]
	if len(r.Turns) != want {
		bad("%d model responses, want %d: %+v", len(r.Turns), want, r.Turns)
		return problems
	}
	if cl.sampling && fake {
		// The fake model names what it got in every answer (samplingNote).
		notes := []string{"top_p=0.9", "user=user-1"}
		if cl.API != responses && up != responses {
			notes = append(notes, `stop="\n\nEND"`)
		}
		if cl.API == chat && up == chat {
			notes = append(notes, "seed=7")
		}
		last := r.Turns[len(r.Turns)-1].Text
		for _, n := range notes {
			if !strings.Contains(last, n) {
				bad("the upstream did not get %s (mapped to its own field): the answer says %q", n, last)
			}
		}
	}
	switch task {
	case "plugin":
		tr := r.Turns[0]
		if !strings.Contains(tr.Text, pluginResult) || len(tr.Calls) != 0 {
			bad("answered %q with calls %v, want the plugin's result %q and no calls", tr.Text, tr.Calls, pluginResult)
		}
		usage(0, tr, 2*modelIn, 2*modelOut)
	case "client_tool":
		first, second := r.Turns[0], r.Turns[1]
		if len(first.Calls) != 1 || first.Calls[0].Name != getTime.Name {
			bad("turn 1 made calls %v, want one %s call", first.Calls, getTime.Name)
		} else {
			var a struct{ Zone string }
			json.Unmarshal([]byte(first.Calls[0].Args), &a)
			if a.Zone == "" || a.Zone != strings.ToUpper(a.Zone) || (fake && a.Zone != "CET") {
				bad("turn 1 called %s with %s, want the zone as the plugin upper-cased it", getTime.Name, first.Calls[0].Args)
			}
		}
		if !strings.Contains(second.Text, "From get_time: 12:00") || len(second.Calls) != 0 {
			bad("turn 2 answered %q with calls %v, want the answer from the client's result", second.Text, second.Calls)
		}
		usage(0, first, modelIn, modelOut)
		usage(1, second, modelIn, modelOut)
	case "two_turns":
		first, second := r.Turns[0], r.Turns[1]
		if strings.TrimSpace(first.Text) == "" || len(first.Calls) != 0 {
			bad("turn 1 answered %q with calls %v", first.Text, first.Calls)
		}
		wantText := fmt.Sprintf("Heard %q then %q after 1 answer(s).", "Hello, my name is Ada.", "What is my name?")
		if !fake {
			wantText = "What is my name?"
		}
		if !strings.Contains(second.Text, wantText) {
			bad("turn 2 answered %q, want it to show the whole history: %q", second.Text, wantText)
		}
		usage(0, first, modelIn, modelOut)
		usage(1, second, modelIn, modelOut)
	}
	return problems
}

// streamRules holds a raw stream of protocol api to the rules the SDKs'
// accumulators rely on (streamcheck): some frameworks lose data silently
// on a broken stream, so their results alone would not show it.
func streamRules(api string, request *string, raw []byte) error {
	var failed map[string]any
	var err error
	switch api {
	case chat:
		var req struct {
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if request != nil {
			json.Unmarshal([]byte(*request), &req)
		}
		var s *streamcheck.ChatStream
		s, err = streamcheck.Chat(raw, req.StreamOptions.IncludeUsage)
		if s != nil {
			failed = s.Error
		}
	case responses:
		var s *streamcheck.ResponsesStream
		s, err = streamcheck.Responses(raw)
		if s != nil && s.Status == "failed" {
			failed = s.Final
		}
	case messages:
		var s *streamcheck.MessagesStream
		s, err = streamcheck.Messages(raw)
		if s != nil {
			failed = s.Error
		}
	}
	if err == nil && failed != nil {
		err = fmt.Errorf("in-stream error: %v", failed)
	}
	return err
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// table collects the verdicts of TestRealClients.
type table struct {
	mu    sync.Mutex
	cells map[string]cell // client|stream|upstream|task
}

type cell struct {
	ok      bool
	problem string
}

func (tb *table) record(cl realClient, stream bool, up, task string, problems []string) {
	c := cell{ok: len(problems) == 0}
	if !c.ok {
		c.problem = problems[0]
	}
	tb.mu.Lock()
	tb.cells[fmt.Sprintf("%s|%v|%s|%s", cl.Name, stream, up, task)] = c
	tb.mu.Unlock()
}

// render is the table in Markdown: one row per client, API and mode; one
// column per upstream with the three tasks' marks (plugin tool, client
// tool, two turns); failures numbered, with the first problem of each.
func (tb *table) render() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var b strings.Builder
	b.WriteString("Marks per cell: plugin tool, client tool, two turns. ✓ pass, ✗N fail (note N), · not run. Upstream: offline model, fake chat / responses / messages model; = same protocol as the client.\n\n")
	b.WriteString("| client | API | mode |")
	for _, up := range upstreamNames {
		fmt.Fprintf(&b, " %s |", up)
	}
	b.WriteString("\n|---|---|---|")
	for range upstreamNames {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	notes := map[string]int{}
	var order []string
	pass, total := 0, 0
	for _, cl := range realClients {
		for _, stream := range []bool{false, true} {
			fmt.Fprintf(&b, "| %s | %s | %s |", cl.Name, cl.API, mode(stream))
			for _, up := range upstreamNames {
				var marks []string
				for _, task := range tasks {
					c, ok := tb.cells[fmt.Sprintf("%s|%v|%s|%s", cl.Name, stream, up, task.Name)]
					switch {
					case !ok:
						marks = append(marks, "·")
					case c.ok:
						pass++
						total++
						marks = append(marks, "✓")
					default:
						total++
						p := c.problem
						if len(p) > 240 {
							p = p[:240] + "…"
						}
						n, seen := notes[p]
						if !seen {
							n = len(order) + 1
							notes[p] = n
							order = append(order, p)
						}
						marks = append(marks, fmt.Sprintf("✗%d", n))
					}
				}
				same := ""
				if up == cl.API {
					same = "= "
				}
				fmt.Fprintf(&b, " %s%s |", same, strings.Join(marks, " "))
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\n%d of %d pass.\n", pass, total)
	if len(order) > 0 {
		b.WriteString("\nFailures:\n")
		for i, p := range order {
			fmt.Fprintf(&b, "%d. %s\n", i+1, p)
		}
	}
	b.WriteString("\nClients:\n")
	names := make([]string, 0, len(realClients))
	for _, cl := range realClients {
		names = append(names, fmt.Sprintf("- %s: %s", cl.Name, cl.Note))
	}
	sort.Strings(names)
	b.WriteString(strings.Join(names, "\n"))
	b.WriteString("\n")
	return b.String()
}
