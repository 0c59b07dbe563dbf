package offline

import "github.com/hookhost/hookhost/llm"

// The offline model is the default: it needs no URL, no key and no
// network, and every network setting of [llm] is ignored for it.
func init() {
	llm.RegisterProvider(llm.ProviderInfo{
		Name: providerName,
		Rank: 0,
		New:  func(llm.ProviderSettings) (llm.Provider, error) { return New(), nil },
	})
}
