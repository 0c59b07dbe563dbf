package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The checks in this file decide what "malformed" means for each result
// type. A malformed result counts as nil, like any other plugin failure.

func checkToolList(tools []ToolSpec) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if !ValidToolName(t.Name) {
			return fmt.Errorf("tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q listed twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.InputSchema) > 0 && !isJSONObject(t.InputSchema) {
			return fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
		}
	}
	return nil
}

func (p *RequestPatch) check() error {
	if p.Model != nil && *p.Model == "" {
		return errors.New("model set to the empty string")
	}
	if p.Messages != nil && len(p.Messages) == 0 {
		return errors.New("messages set to an empty list")
	}
	if p.MaxTokens != nil && *p.MaxTokens < 0 {
		return fmt.Errorf("max_tokens %d is negative", *p.MaxTokens)
	}
	if p.Temperature != nil && (*p.Temperature < 0 || *p.Temperature > 2) {
		return fmt.Errorf("temperature %g is outside [0, 2]", *p.Temperature)
	}
	if p.Tools != nil {
		if err := checkToolList(p.Tools); err != nil {
			return err
		}
	}
	return nil
}

// Apply returns req with the patch's set fields replaced, and the names of
// the fields the patch set.
func (p RequestPatch) Apply(req ModelRequest) (ModelRequest, []string) {
	var fields []string
	if p.Model != nil {
		req.Model = *p.Model
		fields = append(fields, "model")
	}
	if p.System != nil {
		req.System = *p.System
		fields = append(fields, "system")
	}
	if p.Messages != nil {
		req.Messages = p.Messages
		fields = append(fields, "messages")
	}
	if p.Tools != nil {
		req.Tools = p.Tools
		fields = append(fields, "tools")
	}
	if p.MaxTokens != nil {
		req.MaxTokens = *p.MaxTokens
		fields = append(fields, "max_tokens")
	}
	if p.Temperature != nil {
		t := *p.Temperature
		req.Temperature = &t
		fields = append(fields, "temperature")
	}
	return req, fields
}

func (d *PreToolCallDecision) check() error {
	if d.Block != nil && d.ModifiedArgs != nil {
		return errors.New("both block and modified_args set")
	}
	if d.ModifiedArgs != nil && !isJSONObject(d.ModifiedArgs) {
		return errors.New("modified_args is not a JSON object")
	}
	return nil
}

// AsJSON applies the one rule for what a tool result holds: JSON. Content
// that is not JSON is taken as text and returned as a JSON string holding
// it, so a plugin that answers in plain text is understood rather than
// punished, and everything downstream may rely on JSON. Invalid UTF-8 in
// such text becomes U+FFFD. JSON content is returned unchanged.
func (r ToolResult) AsJSON() ToolResult {
	if json.Valid([]byte(r.Content)) {
		return r
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)  // the model reads it: keep <, > and & as they are
	_ = enc.Encode(r.Content) // a string always encodes
	r.Content = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return r
}
