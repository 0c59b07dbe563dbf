package config

// llm.provider is checked against the providers linked into the program,
// as hookhost links them.
import (
	_ "github.com/hookhost/hookhost/llm/anthropic"
	_ "github.com/hookhost/hookhost/llm/offline"
	_ "github.com/hookhost/hookhost/llm/openai"
)
