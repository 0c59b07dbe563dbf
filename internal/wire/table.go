package wire

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// The protocol as a table: one row per hook, tying the hook to its
// version 1 RPC method, its request and response messages and their
// conversions (convert.go). Everything per hook in this package is driven
// by it: both clients, the version 1 service description and the version 2
// server. Adding a hook means a row here and its conversions.
var table = []hookRow{
	observer(hooks.OnSessionStart, "OnSessionStart", sessionStartToPB, sessionStartFromPB),
	observer(hooks.OnSessionEnd, "OnSessionEnd", sessionEndToPB, sessionEndFromPB),
	answerer(hooks.PreToolListFinalized, "PreToolListFinalized", toolListRequestToPB, toolListRequestFromPB, overrideToPB, overrideFromPB),
	answerer(hooks.PreAPIRequestMutable, "PreApiRequestMutable", apiRequestToPB, apiRequestFromPB, patchResponseToPB, patchResponseFromPB),
	answerer(hooks.PreLLMCallCanProvideResponse, "PreLlmCallCanProvideResponse", llmRequestToPB, llmRequestFromPB, modelResponseResponseToPB, modelResponseResponseFromPB),
	answerer(hooks.PostLLMCallCanReissue, "PostLlmCallCanReissue", llmCallToPB, llmCallFromPB, reissueToPB, reissueFromPB),
	observer(hooks.PostLLMCall, "PostLlmCall", inferenceToPB, inferenceFromPB),
	answerer(hooks.TransformLLMOutput, "TransformLlmOutput", llmOutputToPB, llmOutputFromPB, textToPB, textFromPB),
	answerer(hooks.PreToolCall, "PreToolCall", toolCallRequestToPB, toolCallRequestFromPB, decisionToPB, decisionFromPB),
	answerer(hooks.PreToolCallCanProvideResult, "PreToolCallCanProvideResult", toolCallRequestToPB, toolCallRequestFromPB, toolResultResponseToPB, toolResultResponseFromPB),
	observer(hooks.PostToolCall, "PostToolCall", toolCallOutcomeToPB, toolCallOutcomeFromPB),
	answerer(hooks.TransformToolResult, "TransformToolResult", toolCallOutcomeToPB, toolCallOutcomeFromPB, toolResultResponseToPB, toolResultResponseFromPB),
	answerer(hooks.OnUserMessage, "OnUserMessage", userMessageToPB, userMessageFromPB, userMessageDecisionToPB, userMessageDecisionFromPB),
	answerer(hooks.PostToolCallCanAddContext, "PostToolCallCanAddContext", toolCallOutcomeToPB, toolCallOutcomeFromPB, addedContextToPB, addedContextFromPB),
}

// v1Service is the full name of protocol version 1's gRPC service.
const v1Service = "hookhost.plugin.v1.Plugin"

// hookRow is one hook as the wire carries it. The host uses request and
// answer, the plugin payload and response; both make empty messages with
// newRequest and newResponse to decode into.
type hookRow struct {
	name       hooks.Name
	method     string // the version 1 RPC method, e.g. "PreToolCall"
	fullMethod string // "/hookhost.plugin.v1.Plugin/PreToolCall"

	newRequest  func() proto.Message
	newResponse func() proto.Message

	// request converts the hook's payload; a payload of another type is
	// the host's own mistake.
	request func(req any) (proto.Message, error)
	// answer converts the plugin's response; an empty one is nil.
	answer func(proto.Message) any
	// payload converts a request back into the hook's payload.
	payload func(proto.Message) any
	// response converts a handler's answer; an answer of another type is
	// the plugin's own mistake.
	response func(answer any) (proto.Message, error)
}

// rowOf returns the row of hook h.
func rowOf(h hooks.Name) (*hookRow, bool) {
	for i := range table {
		if table[i].name == h {
			return &table[i], true
		}
	}
	return nil, false
}

// fresh returns an empty message of M's type. M is a generated message
// pointer type, whose nil value still knows its type.
func fresh[M proto.Message]() proto.Message {
	var m M
	return m.ProtoReflect().Type().New().Interface()
}

// row builds the parts every hook shares: its name and its request.
func row[Req any, ReqM proto.Message](h hooks.Name, method string, to func(Req) ReqM, from func(ReqM) Req) hookRow {
	return hookRow{
		name:       h,
		method:     method,
		fullMethod: "/" + v1Service + "/" + method,
		newRequest: fresh[ReqM],
		request: func(req any) (proto.Message, error) {
			r, ok := req.(Req)
			if !ok {
				return nil, fmt.Errorf("host: %s payload is %T, want %T", h, req, r)
			}
			return to(r), nil
		},
		payload: func(m proto.Message) any { return from(m.(ReqM)) },
	}
}

// observer is the row of a hook that answers nothing (pluginv1.Empty).
func observer[Req any, ReqM proto.Message](h hooks.Name, method string, to func(Req) ReqM, from func(ReqM) Req) hookRow {
	r := row(h, method, to, from)
	r.newResponse = fresh[*pluginv1.Empty]
	r.answer = func(proto.Message) any { return nil }
	r.response = func(any) (proto.Message, error) { return &pluginv1.Empty{}, nil }
	return r
}

// answerer is the row of a hook whose answer is a *Res, nil for no opinion.
func answerer[Req any, ReqM proto.Message, Res any, ResM proto.Message](h hooks.Name, method string,
	to func(Req) ReqM, from func(ReqM) Req, resTo func(*Res) ResM, resFrom func(ResM) *Res) hookRow {
	r := row(h, method, to, from)
	r.newResponse = fresh[ResM]
	r.answer = func(m proto.Message) any {
		if v := resFrom(m.(ResM)); v != nil {
			return v
		}
		return nil
	}
	r.response = func(answer any) (proto.Message, error) {
		if answer == nil {
			return resTo(nil), nil
		}
		v, ok := answer.(*Res)
		if !ok {
			return nil, fmt.Errorf("%w: %s answered with a %T, want %T", hooks.ErrMalformed, h, answer, v)
		}
		return resTo(v), nil
	}
	return r
}
