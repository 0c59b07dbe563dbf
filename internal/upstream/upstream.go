package upstream

import "github.com/hookhost/hookhost/llm"

// Settings are what a provider's configuration adds to the request body a
// codec encodes: the defaults for what a request leaves unset, and the
// choices the endpoint imposes. The codecs take them explicitly, so that
// a provider is a transport and holds no request building of its own.
type Settings struct {
	// MaxTokens caps output when a request does not; 0 sends no cap
	// where the protocol allows that.
	MaxTokens int
	// Temperature is used when a request sets none; nil sends none.
	Temperature *float64
	// CompletionTokens sends a Chat Completions cap as
	// max_completion_tokens, which api.openai.com's newer models need,
	// rather than max_tokens, which compatible servers read.
	CompletionTokens bool
}

// MaxTokensFor is the output cap a body for req carries.
func (s Settings) MaxTokensFor(req llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return s.MaxTokens
}

// TemperatureFor is the temperature a body for req carries.
func (s Settings) TemperatureFor(req llm.Request) *float64 {
	if req.Temperature != nil {
		return req.Temperature
	}
	return s.Temperature
}

// Events are a streamed answer's server-sent events as a provider's
// transport reads them, for a codec to decode.
type Events interface {
	// Next returns the next event's name ("" when it had none) and data.
	// The stream's end is io.EOF or io.ErrUnexpectedEOF; any other error
	// is the transport's own, already worded, and is returned as is.
	Next() (name, data string, err error)
	// Progress restarts the transport's idle timeout: a codec calls it
	// for an event that added to the answer, and only then.
	Progress()
}
