// Package responses is the gateway's OpenAI Responses front: it decodes client requests
// into dialect.Call and writes the loop's answer back, whole or streamed.
package responses

import (
	"net/http"

	"github.com/hookhost/hookhost/gateway/dialect"
	"github.com/hookhost/hookhost/llm"
)

// Front speaks OpenAI Responses to clients.
type Front struct{}

var _ dialect.Front = (*Front)(nil)

// New returns the front.
func New() *Front { return &Front{} }

// Protocol returns llm.ProtocolResponses.
func (f *Front) Protocol() llm.Protocol { return llm.ProtocolResponses }

// Path returns "/v1/responses".
func (f *Front) Path() string { return "/v1/responses" }

// Decode reads a client request body.
func (f *Front) Decode(body []byte) (*dialect.Call, error) { panic("not yet") }

// Encode writes a whole response body.
func (f *Front) Encode(call *dialect.Call, res *dialect.Result) ([]byte, error) { panic("not yet") }

// NewStream returns a Sink writing server-sent events to w.
func (f *Front) NewStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) dialect.Sink {
	panic("not yet")
}

// ErrorBody renders e in the protocol's error shape.
func (f *Front) ErrorBody(e *dialect.Error) []byte { panic("not yet") }
