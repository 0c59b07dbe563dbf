package chat

import (
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
)

// ErrorBody renders e as {"error":{"message","type","param","code"}}.
func (f *Front) ErrorBody(e *dialect.Error) []byte { return codec.OpenAIErrorBody(e) }
