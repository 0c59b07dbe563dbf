package agenttest

import "github.com/hookhost/hookhost/internal/fakeapi"

// item is one step of a conversation a request carries, whatever its
// protocol: a text, a tool call or a tool result.
type item = fakeapi.Item

// conversationOf flattens the conversation in a request body of protocol
// proto; system and developer prompts are left out.
func conversationOf(proto string, body []byte) ([]item, error) {
	all, err := fakeapi.Conversation(proto, body)
	if err != nil {
		return nil, err
	}
	var out []item
	for _, it := range all {
		if it.Role != "system" && it.Role != "developer" {
			out = append(out, it)
		}
	}
	return out, nil
}

// toolsOf names the tools a request body of protocol proto offers; a tool
// without a name is left out.
func toolsOf(proto string, body []byte) ([]string, error) {
	all, err := fakeapi.Tools(proto, body)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, name := range all {
		if name != "" {
			names = append(names, name)
		}
	}
	return names, nil
}
