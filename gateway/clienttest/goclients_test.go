package clienttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oairesponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// The Go SDKs run in this process, each case with its own client and an
// HTTP transport that keeps every exchange, as agents.mjs' fetch wrapper
// does for the npm clients.

// recorder is an http.RoundTripper that keeps what it carried.
type recorder struct {
	mu sync.Mutex
	r  *caseResult
}

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody *string
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		s := string(b)
		reqBody = &s
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	// The SDK reads the body as it streams; the copy is taken as it goes.
	var kept bytes.Buffer
	rec.mu.Lock()
	i := len(rec.r.Exchanges)
	rec.r.Exchanges = append(rec.r.Exchanges, rawExchange{URL: req.URL.String(), Request: reqBody, Status: res.StatusCode, CType: res.Header.Get("Content-Type")})
	rec.mu.Unlock()
	res.Body = &keptBody{ReadCloser: res.Body, kept: &kept, done: func() {
		rec.mu.Lock()
		rec.r.Exchanges[i].Body = kept.String()
		rec.mu.Unlock()
	}}
	return res, nil
}

type keptBody struct {
	io.ReadCloser
	kept *bytes.Buffer
	done func()
	once sync.Once
}

func (k *keptBody) Read(p []byte) (int, error) {
	n, err := k.ReadCloser.Read(p)
	k.kept.Write(p[:n])
	if err != nil {
		k.once.Do(k.done)
	}
	return n, err
}

func (k *keptBody) Close() error {
	k.once.Do(k.done)
	return k.ReadCloser.Close()
}

// fail records err as the error that ended the conversation.
func (r *caseResult) fail(err error) {
	status := any(nil)
	var oe *openai.Error
	var ae *anthropic.Error
	switch {
	case errors.As(err, &oe):
		status = oe.StatusCode
	case errors.As(err, &ae):
		status = ae.StatusCode
	}
	r.Error = &clientError{Class: fmt.Sprintf("%T", err), Status: status, Message: err.Error()}
}

var timeSchema = map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}, "required": []string{"zone"}}

func firstPrompt(task string) string {
	return map[string]string{"plugin": "What is the weather in Paris?", "client_tool": "What time is it in Paris?", "two_turns": "Hello, my name is Ada."}[task]
}

const secondPrompt = "What is my name?"

// converse runs a case's conversation: the first request; then, unless
// the plugin task ends there, continueWith adds to the request what the
// task says (the client tool's results, or the second prompt) from the
// first answer, and the second request. An error ends it, kept in r.
func converse[A any](r *caseResult, task string, ask func() (A, error), continueWith func(first A)) {
	first, err := ask()
	if err != nil {
		r.fail(err)
		return
	}
	if task == "plugin" {
		return
	}
	continueWith(first)
	if _, err := ask(); err != nil {
		r.fail(err)
	}
}

// openaiGoChat continues a conversation as openai-go's README does:
// Message.ToParam() appended, then openai.ToolMessage per call; streamed
// through the ChatCompletionAccumulator.
func openaiGoChat(ctx context.Context, c clientCase) (r caseResult) {
	client := openai.NewClient(option.WithBaseURL(c.Base+"/v1"), option.WithAPIKey(c.Key), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: &recorder{r: &r}}))
	params := openai.ChatCompletionNewParams{
		Model:    c.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(firstPrompt(c.Task))},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: getTime.Name, Description: openai.String(getTime.Description), Parameters: timeSchema,
		})},
	}
	if c.Stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	ask := func() (*openai.ChatCompletion, error) {
		var cc *openai.ChatCompletion
		if c.Stream {
			stream := client.Chat.Completions.NewStreaming(ctx, params)
			acc := openai.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				return nil, err
			}
			cc = &acc.ChatCompletion
		} else {
			var err error
			if cc, err = client.Chat.Completions.New(ctx, params); err != nil {
				return nil, err
			}
		}
		if len(cc.Choices) != 1 {
			return nil, fmt.Errorf("%d choices", len(cc.Choices))
		}
		m := cc.Choices[0].Message
		tr := turn{Text: m.Content, In: int(cc.Usage.PromptTokens), Out: int(cc.Usage.CompletionTokens)}
		for _, tc := range m.ToolCalls {
			tr.Calls = append(tr.Calls, call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		r.Turns = append(r.Turns, tr)
		params.Messages = append(params.Messages, m.ToParam())
		return cc, nil
	}
	converse(&r, c.Task, ask, func(cc *openai.ChatCompletion) {
		switch c.Task {
		case "client_tool":
			for _, tc := range cc.Choices[0].Message.ToolCalls {
				params.Messages = append(params.Messages, openai.ToolMessage("12:00", tc.ID))
			}
		case "two_turns":
			params.Messages = append(params.Messages, openai.UserMessage(secondPrompt))
		}
	})
	return r
}

// openaiGoResponses follows openai-go's README samples for multi-turn
// Responses and tool calling: the next request carries only the new input
// and previous_response_id.
func openaiGoResponses(ctx context.Context, c clientCase) (r caseResult) {
	client := openai.NewClient(option.WithBaseURL(c.Base+"/v1"), option.WithAPIKey(c.Key), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: &recorder{r: &r}}))
	params := oairesponses.ResponseNewParams{
		Model: c.Model,
		Input: oairesponses.ResponseNewParamsInputUnion{OfString: openai.String(firstPrompt(c.Task))},
		Tools: []oairesponses.ToolUnionParam{{OfFunction: &oairesponses.FunctionToolParam{
			Name: getTime.Name, Description: openai.String(getTime.Description), Parameters: timeSchema,
		}}},
	}
	ask := func() (*oairesponses.Response, error) {
		var resp *oairesponses.Response
		if c.Stream {
			stream := client.Responses.NewStreaming(ctx, params)
			for stream.Next() {
				if ev := stream.Current(); ev.Type == "response.completed" {
					done := ev.Response
					resp = &done
				}
			}
			if err := stream.Err(); err != nil {
				return nil, err
			}
			if resp == nil {
				return nil, errors.New("the stream ended without response.completed")
			}
		} else {
			var err error
			if resp, err = client.Responses.New(ctx, params); err != nil {
				return nil, err
			}
		}
		tr := turn{Text: resp.OutputText(), In: int(resp.Usage.InputTokens), Out: int(resp.Usage.OutputTokens)}
		for _, it := range resp.Output {
			if it.Type == "function_call" {
				fc := it.AsFunctionCall()
				tr.Calls = append(tr.Calls, call{ID: fc.CallID, Name: fc.Name, Args: fc.Arguments})
			}
		}
		r.Turns = append(r.Turns, tr)
		return resp, nil
	}
	converse(&r, c.Task, ask, func(resp *oairesponses.Response) {
		params.PreviousResponseID = openai.String(resp.ID)
		switch c.Task {
		case "client_tool":
			var outputs []oairesponses.ResponseInputItemUnionParam
			for _, it := range resp.Output {
				if it.Type == "function_call" {
					outputs = append(outputs, oairesponses.ResponseInputItemUnionParam{OfFunctionCallOutput: &oairesponses.ResponseInputItemFunctionCallOutputParam{
						CallID: openai.String(it.AsFunctionCall().CallID),
						Output: oairesponses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("12:00")},
					}})
				}
			}
			params.Input = oairesponses.ResponseNewParamsInputUnion{OfInputItemList: outputs}
		case "two_turns":
			params.Input = oairesponses.ResponseNewParamsInputUnion{OfString: openai.String(secondPrompt)}
		}
	})
	return r
}

// anthropicGoMessages continues a conversation as anthropic-sdk-go's
// README does: Message.ToParam() appended, then one user message of
// tool_result blocks; streamed through Message.Accumulate.
func anthropicGoMessages(ctx context.Context, c clientCase) (r caseResult) {
	client := anthropic.NewClient(anthropicoption.WithBaseURL(c.Base), anthropicoption.WithAPIKey(c.Key), anthropicoption.WithMaxRetries(0),
		anthropicoption.WithHTTPClient(&http.Client{Transport: &recorder{r: &r}}))
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(c.Model),
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(firstPrompt(c.Task)))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: getTime.Name, Description: anthropic.String(getTime.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: timeSchema["properties"], Required: []string{"zone"}},
		}}},
	}
	ask := func() (*anthropic.Message, error) {
		var m *anthropic.Message
		if c.Stream {
			stream := client.Messages.NewStreaming(ctx, params)
			acc := anthropic.Message{}
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					return nil, err
				}
			}
			if err := stream.Err(); err != nil {
				return nil, err
			}
			m = &acc
		} else {
			var err error
			if m, err = client.Messages.New(ctx, params); err != nil {
				return nil, err
			}
		}
		tr := turn{In: int(m.Usage.InputTokens), Out: int(m.Usage.OutputTokens)}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				tr.Text += b.Text
			case "tool_use":
				tr.Calls = append(tr.Calls, call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			}
		}
		r.Turns = append(r.Turns, tr)
		params.Messages = append(params.Messages, m.ToParam())
		return m, nil
	}
	converse(&r, c.Task, ask, func(m *anthropic.Message) {
		switch c.Task {
		case "client_tool":
			var results []anthropic.ContentBlockParamUnion
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					results = append(results, anthropic.NewToolResultBlock(b.ID, "12:00", false))
				}
			}
			params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
		case "two_turns":
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(secondPrompt)))
		}
	})
	return r
}
