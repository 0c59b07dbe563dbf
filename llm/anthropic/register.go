package anthropic

import "github.com/hookhost/hookhost/llm"

func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name:             Name,
		Rank:             2,
		DefaultBaseURL:   DefaultBaseURL,
		KeyEnv:           "ANTHROPIC_API_KEY",
		ExampleModel:     "claude-sonnet-4-5",
		Protocols:        []llm.Protocol{llm.ProtocolMessages},
		AuthStyle:        llm.AuthXAPIKey,
		MaxTemperature:   1,
		DefaultMaxTokens: DefaultMaxTokens,
		New: func(s llm.ProviderSettings) (llm.Provider, error) {
			p, err := New(Config{
				BaseURL: s.BaseURL, APIKey: s.APIKey, Headers: s.Headers,
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
