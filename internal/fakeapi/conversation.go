package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Item is one step of the conversation a request carries, whatever its
// protocol: a text, a tool call or a tool result.
type Item struct {
	Kind    string // text, call, result
	Role    string
	ID      string
	Name    string
	Content string
	IsError bool
}

func (i Item) String() string {
	return fmt.Sprintf("%s(%s %s %s %q err=%v)", i.Kind, i.Role, i.ID, i.Name, i.Content, i.IsError)
}

// Text is the text of a content field: a string, or the text of its parts
// (content blocks, input_text/output_text parts, nested tool_result
// content).
func Text(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Conversation flattens the conversation in a request body of protocol
// proto, system and developer prompts included, with their role.
func Conversation(proto string, body []byte) ([]Item, error) {
	var out []Item
	switch proto {
	case Chat:
		var r struct {
			Messages []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				ToolCallID string          `json:"tool_call_id"`
				ToolCalls  []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("messages: %v", err)
		}
		for _, m := range r.Messages {
			if m.Role == "tool" {
				out = append(out, Item{Kind: "result", Role: m.Role, ID: m.ToolCallID, Content: Text(m.Content)})
				continue
			}
			if s := Text(m.Content); s != "" {
				out = append(out, Item{Kind: "text", Role: m.Role, Content: s})
			}
			for _, c := range m.ToolCalls {
				out = append(out, Item{Kind: "call", Role: m.Role, ID: c.ID, Name: c.Function.Name, Content: c.Function.Arguments})
			}
		}
	case Responses:
		var r struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("input: %v", err)
		}
		var s string
		if json.Unmarshal(r.Input, &s) == nil {
			return []Item{{Kind: "text", Role: "user", Content: s}}, nil
		}
		var items []struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments string          `json:"arguments"`
			Input     string          `json:"input"`
			Output    json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(r.Input, &items); err != nil {
			return nil, fmt.Errorf("input: %v", err)
		}
		for _, it := range items {
			switch {
			case it.Type == "function_call":
				out = append(out, Item{Kind: "call", Role: "assistant", ID: it.CallID, Name: it.Name, Content: it.Arguments})
			case it.Type == "custom_tool_call":
				out = append(out, Item{Kind: "call", Role: "assistant", ID: it.CallID, Name: it.Name, Content: it.Input})
			case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
				out = append(out, Item{Kind: "result", Role: "tool", ID: it.CallID, Content: Text(it.Output)})
			case it.Type == "message" || it.Role != "":
				out = append(out, Item{Kind: "text", Role: it.Role, Content: Text(it.Content)})
			}
		}
	case Messages:
		var r struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("messages: %v", err)
		}
		for _, m := range r.Messages {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				out = append(out, Item{Kind: "text", Role: m.Role, Content: s})
				continue
			}
			var blocks []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
				IsError   bool            `json:"is_error"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return nil, fmt.Errorf("messages content: %v", err)
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					out = append(out, Item{Kind: "text", Role: m.Role, Content: b.Text})
				case "tool_use":
					out = append(out, Item{Kind: "call", Role: m.Role, ID: b.ID, Name: b.Name, Content: string(b.Input)})
				case "tool_result":
					out = append(out, Item{Kind: "result", Role: m.Role, ID: b.ToolUseID, Content: Text(b.Content), IsError: b.IsError})
				}
			}
		}
	default:
		return nil, fmt.Errorf("no protocol %q (want %s, %s or %s)", proto, Chat, Responses, Messages)
	}
	return out, nil
}

// Tools names the tools a request body of protocol proto offers, in order;
// a tool without a name is there as "".
func Tools(proto string, body []byte) ([]string, error) {
	var r struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("tools: %v", err)
	}
	var names []string
	for _, tl := range r.Tools {
		if proto == Chat {
			names = append(names, tl.Function.Name)
		} else {
			names = append(names, tl.Name)
		}
	}
	return names, nil
}
