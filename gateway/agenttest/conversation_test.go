package agenttest

import (
	"slices"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// item is one step of a conversation a request carries, whatever its
// protocol: a text, a tool call or a tool result.
type item = fakeapi.Item

// conversationOf flattens the conversation in a request body of protocol
// proto; system and developer prompts are left out.
func conversationOf(proto string, body []byte) ([]item, error) {
	conv, err := fakeapi.Conversation(proto, body)
	return slices.DeleteFunc(conv, func(it item) bool { return it.Role == "system" || it.Role == "developer" }), err
}

// toolsOf names the tools a request body of protocol proto offers; a tool
// without a name is left out.
func toolsOf(proto string, body []byte) ([]string, error) {
	names, err := fakeapi.Tools(proto, body)
	return slices.DeleteFunc(names, func(name string) bool { return name == "" }), err
}
