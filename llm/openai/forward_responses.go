package openai

import (
	"context"
	"errors"

	"github.com/hookhost/hookhost/llm"
)

func (p *Provider) forwardResponses(ctx context.Context, req llm.Request, pass *llm.Passthrough, onText func(string)) (llm.Response, *llm.WireResponse, error) {
	return llm.Response{}, nil, errors.New("not yet")
}
