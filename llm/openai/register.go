package openai

import "github.com/hookhost/hookhost/llm"

func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name:           Name,
		Rank:           1,
		DefaultBaseURL: DefaultBaseURL,
		KeyEnv:         "OPENAI_API_KEY",
		ExampleModel:   "gpt-4.1-mini",
		// OpenAI's API serves both whichever one llm.api picks.
		Protocols: []llm.Protocol{llm.ProtocolChat, llm.ProtocolResponses},
		AuthStyle: llm.AuthBearer,
		New: func(s llm.ProviderSettings) (llm.Provider, error) {
			p, err := New(Config{
				API: s.API, BaseURL: s.BaseURL, APIKey: s.APIKey, Headers: s.Headers,
				MaxTokens: s.MaxTokens, Temperature: s.Temperature,
				Timeout: s.Timeout, CallTimeout: s.CallTimeout, MaxRetries: s.MaxRetries,
			})
			if err != nil {
				return nil, err
			}
			return p, nil
		},
	})
}
