package llm

// Protocol names one of the public wire protocols that providers speak and
// that the gateway serves.
type Protocol string

// The wire protocols hookhost speaks on either side.
const (
	ProtocolChat      Protocol = "openai-chat"        // POST /v1/chat/completions
	ProtocolResponses Protocol = "openai-responses"   // POST /v1/responses
	ProtocolMessages  Protocol = "anthropic-messages" // POST /v1/messages
)
