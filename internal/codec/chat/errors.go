package chat

import "github.com/hookhost/hookhost/gateway/dialect"

// ErrorBody renders e as {"error":{"message","type","param","code"}}.
func (f *Front) ErrorBody(e *dialect.Error) []byte { return dialect.OpenAIErrorBody(e) }
