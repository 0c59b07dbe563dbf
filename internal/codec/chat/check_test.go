package chat_test

import (
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// checkStream fails the test unless raw keeps the rules the official
// clients rely on (streamcheck.Chat), and unless its chunks carry what this
// front promises beyond them: an OpenAI-style completion id and a creation
// time.
func checkStream(t testing.TB, raw []byte, includeUsage bool) *streamcheck.ChatStream {
	t.Helper()
	s, err := streamcheck.Chat(raw, includeUsage)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if s.Chunks > 0 && (!strings.HasPrefix(s.ID, "chatcmpl-") || s.Created == 0) {
		t.Errorf("the chunks' id %q / created %d", s.ID, s.Created)
	}
	return s
}
