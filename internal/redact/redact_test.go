package redact

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const key = "sk-test-0123456789abcdef"

// escaped writes every character of s whose index is odd as a \u escape.
func escaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i%2 == 1 {
			b.WriteString(`\u00` + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])) + string("0123456789abcdef"[s[i]&15]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestMaskFindsEveryForm(t *testing.T) {
	for name, body := range map[string]string{
		"plain text":     "upstream said: " + key + " is wrong",
		"json":           `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`,
		"json escaped":   `{"error":{"message":"bad key ` + escaped(key) + `"}}`,
		"every escaped":  `"` + strings.ReplaceAll(escaped(key+"x"), "x", "") + `"`,
		"solidus escape": `{"k":"` + strings.Replace(key, "-", `\u002d`, 1) + `"}`,
		"twice":          key + key,
	} {
		b := []byte(body)
		if !Mask(b, key) {
			t.Errorf("%s: nothing found in %s", name, body)
		}
		if len(b) != len(body) {
			t.Errorf("%s: the length changed", name)
		}
		if strings.Contains(string(b), key) || strings.Contains(string(b), "0123456789") {
			t.Errorf("%s: %s still has the key", name, b)
		}
	}
}

func TestMaskLeavesOtherBytesAlone(t *testing.T) {
	body := `{"id":"x","text":"sk-test-012 \\u0041 \\ \\u00zz ` + key[:len(key)-1] + `"}`
	b := []byte(body)
	if Mask(b, key, "", "ab") || string(b) != body {
		t.Fatalf("changed %q to %q", body, b)
	}
}

func TestStringBlanksSecrets(t *testing.T) {
	if got := String("a "+key+" b", key, "x"); got != "a "+Marker+" b" {
		t.Fatalf("String: %q", got)
	}
}

// The reader finds a secret split across reads at any point, passes whole
// lines on as they come, and never changes a body without a secret.
func TestReader(t *testing.T) {
	body := "data: {\"a\":1}\n\nevent: error\ndata: {\"message\":\"" + escaped(key) + "\"}\n\n" + strings.Repeat("y", 3000) + key + strings.Repeat("z", 3000)
	want := []byte(body)
	Mask(want, key)
	for _, half := range []bool{false, true} {
		var src io.Reader = strings.NewReader(body)
		if half {
			src = iotest.OneByteReader(src)
		}
		got, err := io.ReadAll(NewReader(io.NopCloser(src), key))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("one byte at a time %v: %v\n%q\nwant\n%q", half, err, got, want)
		}
	}
	clean := strings.Repeat("data: {\"x\":\"sk-\"}\n\n", 1000)
	got, _ := io.ReadAll(NewReader(io.NopCloser(iotest.HalfReader(strings.NewReader(clean))), key))
	if string(got) != clean {
		t.Fatal("a body without the key changed")
	}
}

// A complete line is passed on before the next arrives: a stream's events
// are not held back.
func TestReaderPassesLinesAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(pr, key)
	go pw.Write([]byte("data: {}\n\ndata: {\"partial"))
	buf := make([]byte, 100)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "data: {}\n\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	pw.Close()
}
