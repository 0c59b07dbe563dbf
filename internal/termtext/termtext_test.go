package termtext

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"é\x1b[2K\r\n\tx\xff": `é\x1b[2K\r\n\tx\xff`,
		"plain 1.2.3":         "plain 1.2.3",
		"":                    "",
		"\u202e":              `\u202e`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
