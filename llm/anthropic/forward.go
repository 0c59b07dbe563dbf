package anthropic

import (
	"context"
	"errors"

	"github.com/hookhost/hookhost/llm"
)

var _ llm.Forwarder = (*Provider)(nil)

// Protocol returns llm.ProtocolMessages.
func (p *Provider) Protocol() llm.Protocol { return llm.ProtocolMessages }

// Forward makes one call for a gateway whose client speaks Anthropic
// Messages; see llm.Forwarder.
func (p *Provider) Forward(ctx context.Context, req llm.Request, pass *llm.Passthrough, onText func(string)) (llm.Response, *llm.WireResponse, error) {
	return llm.Response{}, nil, errors.New("not yet")
}
