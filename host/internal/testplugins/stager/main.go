// Command stager is a test plugin in the three hooks of the pre-call
// stage. pre_tool_list_finalized replaces the tools with one named
// "from_stager"; pre_api_request_mutable does as its config's "mutable"
// says:
//
//	ok         patch the system prompt to "stager"
//	fail       return an error
//	hang       never return, whatever its deadline
//	malformed  answer a patch the host refuses (a message of no known role)
//	exit       end the process, in the middle of the stage (once the
//	           tool list's answer has left it)
//
// pre_llm_call_can_provide_response answers "provided: <system> <first
// tool>", so a test reads the request the stage's last hook saw. Its
// plugin name is its base name.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type stager struct {
	sdk.Base
	name    string
	mutable string
}

func (s *stager) Info() sdk.Info { return sdk.Info{Name: s.name, Version: "1.0.0"} }

func (s *stager) Configure(_ context.Context, raw json.RawMessage) error {
	var cfg struct {
		Mutable string `json:"mutable"`
	}
	if err := sdk.DecodeConfig(raw, &cfg); err != nil {
		return err
	}
	s.mutable = cfg.Mutable
	return nil
}

func (s *stager) PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "from_stager", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
}

func (s *stager) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	switch s.mutable {
	case "fail":
		return nil, errors.New("stager was told to fail")
	case "hang":
		select {}
	case "malformed":
		return &hooks.RequestPatch{Messages: []hooks.Message{{Role: "nobody", Content: "x"}}}, nil
	case "exit":
		// Long enough for the answer already sent to leave the process.
		time.Sleep(200 * time.Millisecond)
		os.Exit(3)
	}
	system := "stager"
	return &hooks.RequestPatch{System: &system}, nil
}

func (s *stager) PreLLMCallCanProvideResponse(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
	tool := ""
	if len(req.Request.Tools) > 0 {
		tool = req.Request.Tools[0].Name
	}
	return &hooks.ModelResponse{Message: hooks.Message{Content: "provided: " + req.Request.System + " " + tool}}, nil
}

func main() { sdk.Serve(&stager{name: filepath.Base(os.Args[0])}) }
