// Command testplugin is a plugin for the gateway's tests. It owns the tool
// victim__work: a call records the plugin's pid in <dir>/work.pid (dir
// from its config table) and then waits until the host gives up, so that a
// test can kill the plugin while a request waits on one of its tools.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type victim struct {
	sdk.Base
	dir atomic.Pointer[string]
}

var (
	_ sdk.Configurer     = (*victim)(nil)
	_ sdk.ResultProvider = (*victim)(nil)
)

func (*victim) Info() sdk.Info {
	return sdk.Info{Name: "victim", Version: "1.0.0", Matchers: []string{"victim__*"}, Tools: []hooks.ToolSpec{{
		Name:        "victim__work",
		Description: "does slow work",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}}}
}

func (v *victim) Configure(_ context.Context, raw json.RawMessage) error {
	var c struct {
		Dir string `json:"dir"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Dir == "" {
		return errors.New("config: dir is required")
	}
	v.dir.Store(&c.Dir)
	return nil
}

func (v *victim) PreToolCallCanProvideResult(ctx context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	dir := v.dir.Load()
	if dir == nil || req.Name != "victim__work" {
		return nil, nil
	}
	// Written whole then renamed, so a reader never sees half a pid.
	tmp := filepath.Join(*dir, "work.pid.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(*dir, "work.pid")); err != nil {
		return nil, err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func main() { sdk.Serve(&victim{}) }
