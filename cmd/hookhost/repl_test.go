package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestREPLRefusesAnOverlongLineAndGoesOn drives the real REPL through a pipe,
// as a terminal or a shell redirect would: a line over the limit is refused
// with a message naming the limit, and the next line is still answered.
func TestREPLRefusesAnOverlongLineAndGoesOn(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	cfg := writeConfig(t, "")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writeDone := make(chan error, 1)
	go func() {
		// Written in pieces so the reader sees the line arrive in many
		// reads, as from a real pipe.
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		var err error
		for i := 0; i < 3*maxLineBytes/len(chunk) && err == nil; i++ {
			_, err = w.Write(chunk)
		}
		if err == nil {
			_, err = io.WriteString(w, "\nwhat is 6*7\n/exit\n")
		}
		w.Close()
		writeDone <- err
	}()

	var out, errb bytes.Buffer
	code := make(chan int, 1)
	go func() { code <- run([]string{"chat", "-c", cfg}, r, &out, &errb) }()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d, stderr:\n%s", c, truncate(errb.String()))
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the REPL did not end within 2 minutes")
	}
	r.Close() // unblocks the writer if the REPL stopped reading early
	if err := <-writeDone; err != nil {
		t.Fatalf("writing to the REPL: %v", err)
	}
	if !strings.Contains(errb.String(), fmt.Sprintf("line refused: %d bytes is longer than the 1 MiB limit", 3*maxLineBytes)) {
		t.Fatalf("no refusal naming the limit on stderr:\n%s", truncate(errb.String()))
	}
	if got := strings.TrimSpace(out.String()); !strings.Contains(got, "42") || strings.Count(got, "\n") != 0 {
		t.Fatalf("want only the answer to the line after the refused one, got:\n%s", truncate(got))
	}
}

func truncate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// xs is what endless copies from, filled once: filling each read byte by
// byte would cost seconds under -race for a 256 MiB line.
var xs = []byte(strings.Repeat("x", 64<<10))

// endless yields n bytes of 'x' without ever holding them, then a newline
// and the rest.
type endless struct {
	n    int64
	rest *strings.Reader
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return e.rest.Read(p)
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n := copy(p, xs)
	e.n -= int64(n)
	return n, nil
}

// TestLineReaderMemoryStaysBounded feeds a 256 MiB line: reading past it
// must not allocate anywhere near its size.
func TestLineReaderMemoryStaysBounded(t *testing.T) {
	const huge = 256 << 20
	lr := newLineReader(&endless{n: huge, rest: strings.NewReader("\nnext\n")}, maxLineBytes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	line, err := lr.next()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if line.tooLong != huge || line.text != "" {
		t.Fatalf("over-long line: tooLong %d, text of %d bytes; want tooLong %d and no text", line.tooLong, len(line.text), huge)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("discarding a %d MiB line allocated %d MiB", huge>>20, alloc>>20)
	}
	if line, err = lr.next(); err != nil || line.text != "next" || line.tooLong != 0 {
		t.Fatalf("line after the over-long one: %+v, %v", line, err)
	}
	if _, err = lr.next(); err != io.EOF {
		t.Fatalf("end of input: err = %v, want io.EOF", err)
	}
}

func TestLineReaderLines(t *testing.T) {
	max := 8
	in := "a\r\n\nexactly8\n123456789\nlast"
	want := []readLine{{text: "a"}, {text: ""}, {text: "exactly8"}, {tooLong: 9}, {text: "last"}}
	lr := newLineReader(strings.NewReader(in), max)
	for i, w := range want {
		got, err := lr.next()
		if err != nil || got != w {
			t.Fatalf("line %d: %+v, %v; want %+v", i, got, err, w)
		}
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("end of input: err = %v, want io.EOF", err)
	}
	// A "\r\n" split across two reads of the underlying buffer.
	split := strings.Repeat("a", 64<<10-1)
	lr = newLineReader(strings.NewReader(split+"\r\nb\r"), 1<<20)
	for i, w := range []string{split, "b"} {
		if got, err := lr.next(); err != nil || got.text != w {
			t.Fatalf("split CRLF, line %d: %d bytes, %v; want %d bytes", i, len(got.text), err, len(w))
		}
	}
	// An over-long last line without a newline is still refused, not
	// passed on cut short.
	lr = newLineReader(strings.NewReader(strings.Repeat("y", 20)), max)
	if got, err := lr.next(); err != nil || got != (readLine{tooLong: 20}) {
		t.Fatalf("over-long last line: %+v, %v", got, err)
	}
}
