package llm

import "context"

type apiKeyKey struct{}

// WithAPIKey returns a context that carries key as the credential for the
// provider calls made with it. Providers that send a key (openai,
// anthropic) send this one instead of their configured key and blank it
// out of their errors as they do their own; a gateway uses it to call
// upstream with each client's own key. An empty key returns ctx
// unchanged.
func WithAPIKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, apiKeyKey{}, key)
}

// APIKey returns the key WithAPIKey put in ctx, if any.
func APIKey(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(apiKeyKey{}).(string)
	return key, ok && key != ""
}
