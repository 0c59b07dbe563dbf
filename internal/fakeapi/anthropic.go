package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// MessagesChecked answers like next, unless the request body breaks a rule
// Anthropic's Messages API enforces without a beta header: then it answers
// HTTP 400 in the API's error shape, with the API's wording, as the real
// server would. The rules checked are those a gateway is most likely to
// break when it forwards what a client sent: every message's role is
// "user" or "assistant" (a system prompt belongs in the system field), and
// system is a string or a list of text blocks.
func MessagesChecked(next Reply) Reply {
	return func(w http.ResponseWriter, r Seen) {
		if msg := messagesRefusal(r.Body); msg != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": msg}})
			w.Write(b)
			return
		}
		next(w, r)
	}
}

func messagesRefusal(body []byte) string {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "There was an error parsing the body of your request: " + err.Error()
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
	}
	if len(req.System) > 0 && string(req.System) != "null" {
		var s string
		var blocks []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(req.System, &s) != nil {
			if json.Unmarshal(req.System, &blocks) != nil {
				return "system: Input should be a valid string or a valid list"
			}
			for i, b := range blocks {
				if b.Type != "text" || b.Text == nil {
					return fmt.Sprintf("system.%d: Input should be a text block", i)
				}
			}
		}
	}
	return ""
}
