// Command keyed is a test plugin for the host's check of config keys. Its
// plugin name is the base name it was started as, and the name's first
// word (up to "-") chooses how it treats its config:
//
//	declared  declares the keys deny and message (Info.Config) and decodes
//	          them with sdk.DecodeConfig
//	bare      has no Configure, and so declares that it takes no config
//	based     embeds sdk.Base without overriding Configure: it declares
//	          nothing, and Base's Configure refuses a non-empty table
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type config struct {
	Deny    []string `json:"deny"`
	Message string   `json:"message,omitempty"`
}

type declared struct {
	sdk.Base
	name string
	cfg  config
}

func (d *declared) Info() sdk.Info { return sdk.Info{Name: d.name, Version: "1.0.0", Config: config{}} }

func (d *declared) Configure(_ context.Context, raw json.RawMessage) error {
	return sdk.DecodeConfig(raw, &d.cfg)
}

func (d *declared) PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}

// bare does not embed sdk.Base, so it has no Configure at all.
type bare struct{ name string }

func (b *bare) Info() sdk.Info { return sdk.Info{Name: b.name, Version: "1.0.0"} }

func (b *bare) PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}

type based struct {
	sdk.Base
	name string
}

func (b *based) Info() sdk.Info { return sdk.Info{Name: b.name, Version: "1.0.0"} }

func (b *based) PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}

func main() {
	name := filepath.Base(os.Args[0])
	kind, _, _ := strings.Cut(name, "-")
	switch kind {
	case "declared":
		sdk.Serve(&declared{name: name})
	case "bare":
		sdk.Serve(&bare{name: name})
	default:
		sdk.Serve(&based{name: name})
	}
}
