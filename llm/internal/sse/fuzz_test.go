package sse

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzReader checks that how a stream is cut into reads changes nothing:
// a stream read whole and the same stream read one byte at a time give the
// same events and end with the same error, with the default cap and with
// a small one that the fuzzer can reach.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		": keepalive\n\nevent: message_start\ndata: {\"a\":1}\n\n",
		"data: first\r\ndata:second\r\n\r\n",
		"event: ping\nid: 7\nretry: 100\ndata: {}\n\nevent: no-data\n\ndata: [DONE]\n\n",
		"data: {\"a\":1}\n\ndata: {\"b\"",
		"data: x\n\n: bye\n",
		"data: " + strings.Repeat("y", 80) + "\n\n",
		"data: a\ndata: b\ndata: c\ndata: d\ndata: e\ndata: f\ndata: g\ndata: h\n",
		"\r\n\n\r:\ndata\n\ndata:\n\n",
	} {
		f.Add(s, 64)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, src string, max int) {
		if max < 0 || max > 1<<20 {
			max = 0
		}
		whole, werr := drain(NewReaderLimit(strings.NewReader(src), max))
		bytewise, berr := drain(NewReaderLimit(iotest.OneByteReader(strings.NewReader(src)), max))
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("events differ:\nwhole    %q\nbytewise %q", whole, bytewise)
		}
		if !sameError(werr, berr) {
			t.Fatalf("errors differ: whole %v, bytewise %v", werr, berr)
		}
		if werr != io.EOF && werr != io.ErrUnexpectedEOF {
			if _, ok := werr.(*TooLargeError); !ok {
				t.Fatalf("unexpected error %v", werr)
			}
		}
		limit := max
		if limit == 0 {
			limit = DefaultMaxEvent
		}
		for _, ev := range whole {
			if len(ev.Data)+len(ev.Name) > limit {
				t.Fatalf("event of %d bytes passed a cap of %d", len(ev.Data)+len(ev.Name), limit)
			}
		}
	})
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
