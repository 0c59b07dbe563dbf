package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway"
)

// A program serves a host over HTTP by building a gateway server on it;
// here its handler is served by httptest instead of ListenAndServe. On
// the defaults (the offline model, no plugins, the gateway route) a chat
// completion runs through the hook loop: the client offers a tool, and the
// model asks the client to call it (the offline model passes the question
// itself as the argument).
func ExampleNew() {
	ctx := context.Background()
	h, err := hookhost.Open(ctx, config.Default(), hookhost.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())
	srv, err := gateway.New(h, gateway.Options{})
	if err != nil {
		log.Fatal(err) // the [server] settings are refused: the error says which and why
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	body := `{"model": "` + h.Models()[0] + `",
		"messages": [{"role": "user", "content": "what is the weather in Paris"}],
		"tools": [{"type": "function", "function": {"name": "get_weather", "description": "the weather in a city",
			"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}`
	resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var completion struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&completion); err != nil {
		log.Fatal(err)
	}
	choice := completion.Choices[0]
	fmt.Println(resp.Status, choice.FinishReason)
	for _, c := range choice.Message.ToolCalls {
		fmt.Println(c.Function.Name, c.Function.Arguments)
	}
	// Output:
	// 200 OK tool_calls
	// get_weather {"city":"what is the weather in Paris"}
}
