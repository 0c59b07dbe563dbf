package builtin

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // zone lookups must not depend on the test machine
	"unicode/utf8"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/schema"
)

func run(t *testing.T, tool dispatch.Tool, args string) (any, error) {
	t.Helper()
	// The dispatcher validates before running; do the same so the tests
	// exercise the tool as it is really called.
	if err := schema.Validate(tool.Spec.InputSchema, json.RawMessage(args)); err != nil {
		return nil, err
	}
	return tool.Run(context.Background(), json.RawMessage(args))
}

func TestAllSpecs(t *testing.T) {
	tools, err := All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"now", "calculate", "read_file"}
	if len(tools) != len(want) {
		t.Fatalf("All returned %d tools, want %d", len(tools), len(want))
	}
	for i, tool := range tools {
		if tool.Spec.Name != want[i] {
			t.Errorf("tool %d is %q, want %q", i, tool.Spec.Name, want[i])
		}
		if err := schema.Check(tool.Spec.InputSchema); err != nil {
			t.Errorf("%s: input schema unusable: %v", tool.Spec.Name, err)
		}
		if len(tool.Spec.Description) < 40 {
			t.Errorf("%s: description too short to pick the tool by: %q", tool.Spec.Name, tool.Spec.Description)
		}
		if tool.Run == nil {
			t.Errorf("%s: no Run", tool.Spec.Name)
		}
	}
	if _, err := All(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("All with a missing root should fail")
	}
}

func TestDescriptionsUseEverydayWords(t *testing.T) {
	rf, err := ReadFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool  dispatch.Tool
		words []string
	}{
		{Now(nil), []string{"current date and time", "clock", "what time is it", "today's date"}},
		{Calculate(), []string{"calculat", "math", "arithmetic", "square root", "multiply"}},
		{rf, []string{"read", "file", "contents"}},
	} {
		for _, w := range c.words {
			if !strings.Contains(strings.ToLower(c.tool.Spec.Description), w) {
				t.Errorf("%s description lacks %q", c.tool.Spec.Name, w)
			}
		}
	}
}

// --- now ------------------------------------------------------------------

func TestNow(t *testing.T) {
	fixed := time.Date(2024, time.March, 9, 23, 30, 5, 0, time.UTC)
	tool := Now(func() time.Time { return fixed })
	tests := []struct {
		args             string
		time, date, zone string
		weekday          string
	}{
		{`{}`, "2024-03-09T23:30:05Z", "2024-03-09", "UTC", "Saturday"},
		{`{"timezone":"utc"}`, "2024-03-09T23:30:05Z", "2024-03-09", "UTC", "Saturday"},
		{`{"timezone":"Asia/Tokyo"}`, "2024-03-10T08:30:05+09:00", "2024-03-10", "Asia/Tokyo", "Sunday"},
		{`{"timezone":"America/New_York"}`, "2024-03-09T18:30:05-05:00", "2024-03-09", "America/New_York", "Saturday"},
	}
	for _, tt := range tests {
		got, err := run(t, tool, tt.args)
		if err != nil {
			t.Fatalf("now %s: %v", tt.args, err)
		}
		r := got.(nowResult)
		if r.Time != tt.time || r.Date != tt.date || r.Timezone != tt.zone || r.Weekday != tt.weekday || r.Unix != fixed.Unix() {
			t.Errorf("now %s = %+v", tt.args, r)
		}
	}
	// Missing arguments, as some providers send them, mean UTC.
	if got, err := tool.Run(context.Background(), nil); err != nil || got.(nowResult).Timezone != "UTC" {
		t.Errorf("now with nil args = %v, %v", got, err)
	}
	b, err := json.Marshal(nowResult{})
	if err != nil || !strings.Contains(string(b), `"unix"`) || !strings.Contains(string(b), `"weekday"`) {
		t.Errorf("result JSON = %s, %v", b, err)
	}
}

func TestNowBadZone(t *testing.T) {
	tool := Now(nil)
	for _, zone := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd"} {
		_, err := run(t, tool, `{"timezone":"`+zone+`"}`)
		if err == nil || !strings.Contains(err.Error(), zone) {
			t.Errorf("timezone %q: err = %v, want one naming the zone", zone, err)
		}
	}
	if _, err := run(t, tool, `{"tz":"UTC"}`); err == nil {
		t.Error("unknown argument should fail validation")
	}
}

// --- calculate ------------------------------------------------------------

func TestCalculate(t *testing.T) {
	tests := []struct {
		expr string
		want float64
	}{
		{"2+3*4", 14},
		{"2*3+4", 10},
		{"2^3^2", 512}, // right-associative
		{"2**3", 8},
		{"-2^2", -4}, // unary minus binds looser than ^, as in mathematics
		{"(-2)^2", 4},
		{"2^-1", 0.5},
		{"-2*3", -6},
		{"--3", 3},
		{"+3", 3},
		{"(1+2)*3", 9},
		{"10/4", 2.5},
		{"10-4-3", 3}, // left-associative
		{"64/4/2", 8},
		{"7%3", 1},
		{"-7%3", -1}, // the remainder takes the dividend's sign
		{"7.5%2", 1.5},
		{"sqrt(16)+max(1,5,3)", 9},
		{"min(4, -2, 7)", -2},
		{"max(3)", 3},
		{"abs(-3.5)", 3.5},
		{"floor(2.7)+ceil(2.1)", 5},
		{"round(2.5)+round(-2.5)", 0}, // halves round away from zero
		{"ln(e)", 1},
		{"log10(1000)", 3},
		{"sin(0)+cos(0)", 1},
		{"tan(0)", 0},
		{"cos(pi)", -1},
		{"PI", math.Pi},
		{"SQRT(9)", 3},
		{"1e3", 1000},
		{"2.5E-1", 0.25},
		{".5+1.", 1.5},
		{"1e-400", 0},
		{"0.1+0.2", 0.3}, // tidied
		{"1/3", 0.333333333333333},
		{"2^53+1", 9007199254740992},
		{"3 × 4 ÷ 2", 6},
		{"  ( 1 )  ", 1},
		{"-0", 0},
		{"((((((((((1))))))))))", 1},
	}
	tool := Calculate()
	for _, tt := range tests {
		got, err := run(t, tool, `{"expression":`+quote(tt.expr)+`}`)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		r := got.(calculateResult)
		if r.Value != tt.want && math.Abs(r.Value-tt.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tt.expr, r.Value, tt.want)
		}
		if r.Expression != tt.expr {
			t.Errorf("%s: result echoes %q", tt.expr, r.Expression)
		}
		if math.Signbit(r.Value) && r.Value == 0 {
			t.Errorf("%s: negative zero leaked", tt.expr)
		}
	}
}

func TestCalculateErrors(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{"1+2)", "unexpected ')' at column 4"},
		{"(1+)", "unexpected ')' at column 4"},
		{"(1+2))", "unexpected ')' at column 6"},
		{"1+", "unexpected end of expression at column 3"},
		{"", "expression is empty"},
		{"   ", "expression is empty"},
		{"(1+2", "missing ')' for the '(' at column 1"},
		{"max(1,2", "missing ')' for the '(' at column 4"},
		{"(1 2)", "unexpected '2' at column 4; expected ')'"},
		{"2(3)", "unexpected '(' at column 2; write * between factors"},
		{"2 pi", "unexpected 'pi' at column 3"},
		{"1/0", "division by zero at column 2"},
		{"1/(2-2)", "division by zero at column 2"},
		{"5%0", "remainder of division by zero at column 2"},
		{"foo(1)", `unknown function "foo" at column 1`},
		{"log(10)", "use ln for the natural logarithm or log10"},
		{"x+1", `unknown name "x" at column 1`},
		{"sqrt", "needs its arguments in parentheses"},
		{"sqrt(1,2)", "sqrt at column 1 takes exactly one argument, got 2"},
		{"sqrt()", "sqrt at column 1 takes exactly one argument, got 0"},
		{"max()", "max at column 1 needs at least one argument"},
		{"sqrt(-1)", "sqrt at column 1: square root of a negative number (-1)"},
		{"1 + ln(0)", "ln at column 5: the natural logarithm is only defined for positive numbers, got 0"},
		{"log10(-1)", "only defined for positive numbers"},
		{"10^400", "result of '^' at column 3 is too large"},
		{"(-8)^(1/3)", "result of '^' at column 5 is not a real number"},
		{"0^-1", "too large"},
		{"1e400", "number 1e400 at column 1 is too large"},
		{"2 $ 3", "unexpected character '$' at column 3"},
		{"2 é 3", "unexpected 'é' at column 3"},
		{"é+$", "unexpected character '$' at column 3"}, // columns count characters, not bytes
		{"*2", "unexpected '*' at column 1"},
		{"1,2", "unexpected ',' at column 2"},
		{strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150), "nested too deeply"},
		{strings.Repeat("-", 200) + "1", "nested too deeply"},
	}
	tool := Calculate()
	for _, tt := range tests {
		// Call Run directly: some inputs would not pass the schema, and Run
		// must cope on its own.
		_, err := tool.Run(context.Background(), json.RawMessage(`{"expression":`+quote(tt.expr)+`}`))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tt.expr, err, tt.want)
		}
	}
	long := strings.Repeat("1+", 600) + "1"
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"expression":"`+long+`"}`)); err == nil || !strings.Contains(err.Error(), "limit is 1000") {
		t.Errorf("overlong expression: err = %v", err)
	}
	if _, err := run(t, tool, `{}`); err == nil || !strings.Contains(err.Error(), `missing required property "expression"`) {
		t.Errorf("missing expression: err = %v", err)
	}
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"expression":5}`)); err == nil || !strings.Contains(err.Error(), "invalid arguments") {
		t.Errorf("expression of the wrong type: err = %v", err)
	}
}

// FuzzCalculate runs expressions through the tool as the model calls it
// and checks that hostile input ends in a value or a clear error, at a cost
// linear in its length: no input can nest past the limit or make the parser
// do more than a couple of steps per token.
func FuzzCalculate(f *testing.F) {
	for _, s := range []string{
		"2+3*4", "-2^2", "sqrt(16)+max(1,5,3)", "((1)", "1e308*10", "2^3^2^1", "min(", "é+1", "1..2", "pi e", "**", "1e", "-(-(-1))",
		// Deep nesting of every kind that recurses.
		strings.Repeat("(", 120) + "1" + strings.Repeat(")", 120),
		strings.Repeat("-", 300) + "1",
		strings.Repeat("2^", 200) + "2",
		strings.Repeat("max(", 120) + "1" + strings.Repeat(")", 120),
		strings.Repeat("sqrt(-", 60) + "1" + strings.Repeat(")", 60),
		// Huge exponents and numbers.
		"9^9^9^9", "1e308^1e308", "(-1)^1e308", "2^-1e308", "1e99999999999999999999", "1e-99999999999999999999",
		"0." + strings.Repeat("0", 990) + "1", strings.Repeat("9", 1000), "1" + strings.Repeat("0", 400),
		// Long inputs, at and past the length limit.
		strings.Repeat("1+", 499) + "1", strings.Repeat("1+", 500) + "1", strings.Repeat(" ", 5000) + "1",
		strings.Repeat("max(", 1) + strings.Repeat("1,", 499) + "1)",
	} {
		f.Add(s)
	}
	tool := Calculate()
	f.Fuzz(func(t *testing.T, expr string) {
		v, w, err := evaluateCounted(expr)
		if w.steps > 2*w.tokens+1 {
			t.Fatalf("%q: %d parser steps for %d tokens; parsing must stay linear", clipped(expr), w.steps, w.tokens)
		}
		if w.deepest > maxNesting+1 {
			t.Fatalf("%q: recursion reached depth %d, past the limit of %d", clipped(expr), w.deepest, maxNesting)
		}
		switch {
		case err == nil && (math.IsNaN(v) || math.IsInf(v, 0)):
			t.Fatalf("%q evaluated to %v without an error", clipped(expr), v)
		case err != nil && !strings.Contains(err.Error(), "at column "):
			t.Fatalf("%q: error does not say where the problem is: %v", clipped(expr), err)
		}

		raw, err := json.Marshal(calculateArgs{Expression: expr})
		if err != nil {
			t.Fatal(err)
		}
		got, err := tool.Run(context.Background(), raw)
		long := utf8.RuneCountInString(expr) > maxExpressionLen
		switch {
		case long && (err == nil || !strings.Contains(err.Error(), "the limit is 1000")):
			t.Fatalf("%d characters accepted past the limit: %v, %v", utf8.RuneCountInString(expr), got, err)
		case err != nil && err.Error() == "":
			t.Fatalf("%q: empty error", clipped(expr))
		case err == nil:
			if _, err := json.Marshal(got); err != nil {
				t.Fatalf("%q: result %v cannot be sent to the model: %v", clipped(expr), got, err)
			}
		}
	})
}

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// --- read_file ------------------------------------------------------------

// workspace builds:
//
//	root/
//	  hello.txt          "hello, world\n"
//	  sub/nested.txt     "nested"
//	  sub/deeper/x.md    "# x"
//	  big.txt            100 KiB of text
//	  utf8.txt           "aé" repeated
//	  blob.bin           binary
//	  link-in.txt     -> sub/nested.txt      (stays inside)
//	  link-dir        -> sub                 (stays inside)
//	  link-passwd     -> /etc/passwd         (escapes)
//	  link-out        -> <outside dir>       (escapes)
//	  link-up         -> ../<outside>/secret.txt (escapes)
//	  dangling        -> ../nowhere          (escapes, missing)
//	outside/secret.txt
func workspace(t *testing.T) (root string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	mkdir(t, filepath.Join(root, "sub", "deeper"))
	mkdir(t, outside)
	write(t, filepath.Join(root, "hello.txt"), "hello, world\n")
	write(t, filepath.Join(root, "sub", "nested.txt"), "nested")
	write(t, filepath.Join(root, "sub", "deeper", "x.md"), "# x")
	write(t, filepath.Join(root, "big.txt"), strings.Repeat("0123456789abcdef", 100<<10/16))
	write(t, filepath.Join(root, "utf8.txt"), strings.Repeat("aé", 10))
	write(t, filepath.Join(root, "blob.bin"), "PK\x03\x04\x00\x00binary")
	write(t, filepath.Join(root, "latin1.txt"), "caf\xe9")
	write(t, filepath.Join(outside, "secret.txt"), "secret")
	if runtime.GOOS != "windows" {
		symlink(t, filepath.Join("sub", "nested.txt"), filepath.Join(root, "link-in.txt"))
		symlink(t, "sub", filepath.Join(root, "link-dir"))
		symlink(t, "/etc/passwd", filepath.Join(root, "link-passwd"))
		symlink(t, outside, filepath.Join(root, "link-out"))
		symlink(t, filepath.Join("..", "outside", "secret.txt"), filepath.Join(root, "link-up"))
		symlink(t, filepath.Join("..", "nowhere"), filepath.Join(root, "dangling"))
	}
	return root
}

func TestReadFile(t *testing.T) {
	root := workspace(t)
	tool, err := ReadFile(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args      string
		path      string
		content   string
		truncated bool
		size      int64
	}{
		{`{"path":"hello.txt"}`, "hello.txt", "hello, world\n", false, 13},
		{`{"path":"./hello.txt"}`, "hello.txt", "hello, world\n", false, 13},
		{`{"path":"sub/nested.txt"}`, "sub/nested.txt", "nested", false, 6},
		{`{"path":"sub/deeper/x.md"}`, "sub/deeper/x.md", "# x", false, 3},
		{`{"path":"sub/deeper/../nested.txt"}`, "sub/nested.txt", "nested", false, 6},
		{`{"path":"hello.txt","max_bytes":5}`, "hello.txt", "hello", true, 13},
		{`{"path":"hello.txt","max_bytes":5.0}`, "hello.txt", "hello", true, 13},
		{`{"path":"hello.txt","max_bytes":13}`, "hello.txt", "hello, world\n", false, 13},
		// A cut through "é" drops the partial character instead of
		// reporting the file as binary.
		{`{"path":"utf8.txt","max_bytes":4}`, "utf8.txt", "aéa", true, 30},
		{`{"path":"utf8.txt","max_bytes":3}`, "utf8.txt", "aé", true, 30},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests,
			struct {
				args      string
				path      string
				content   string
				truncated bool
				size      int64
			}{`{"path":"link-in.txt"}`, "link-in.txt", "nested", false, 6},
			struct {
				args      string
				path      string
				content   string
				truncated bool
				size      int64
			}{`{"path":"link-dir/deeper/x.md"}`, "link-dir/deeper/x.md", "# x", false, 3},
		)
	}
	for _, tt := range tests {
		got, err := run(t, tool, tt.args)
		if err != nil {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		r := got.(readFileResult)
		if r.Path != tt.path || r.Content != tt.content || r.Truncated != tt.truncated || r.Size != tt.size {
			t.Errorf("%s = %+v, want path %q content %q truncated %v size %d", tt.args, r, tt.path, tt.content, tt.truncated, tt.size)
		}
	}
}

func TestReadFileDefaultLimit(t *testing.T) {
	tool, err := ReadFile(workspace(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := run(t, tool, `{"path":"big.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	r := got.(readFileResult)
	if len(r.Content) != defaultMaxBytes || !r.Truncated || r.Size != 100<<10 {
		t.Errorf("big.txt: %d bytes, truncated %v, size %d", len(r.Content), r.Truncated, r.Size)
	}
	got, err = run(t, tool, `{"path":"big.txt","max_bytes":1048576}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.(readFileResult); len(r.Content) != 100<<10 || r.Truncated {
		t.Errorf("big.txt with a large limit: %d bytes, truncated %v", len(r.Content), r.Truncated)
	}
}

func TestReadFileRefusals(t *testing.T) {
	root := workspace(t)
	tool, err := ReadFile(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
	}{
		{"../outside/secret.txt", "leads outside the workspace"},
		{"..", "leads outside the workspace"},
		{"sub/../../outside/secret.txt", "leads outside the workspace"},
		{"/etc/passwd", "is absolute"},
		{filepath.Join(root, "hello.txt"), "is absolute"},
		{"missing.txt", `no such file "missing.txt"`},
		{"sub/missing.txt", `no such file "sub/missing.txt"`},
		{"hello.txt/x", "is a file, not a directory"},
		{"sub", `"sub" is a directory`},
		{".", `"." is a directory`},
		{"blob.bin", `"blob.bin" is a binary file`},
		{"latin1.txt", "binary file"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, []struct{ path, want string }{
			{"link-passwd", "leads outside the workspace"},
			{"link-out", "leads outside the workspace"},
			{"link-out/secret.txt", "leads outside the workspace"},
			{"link-up", "leads outside the workspace"},
			{"dangling", "leads outside the workspace"},
		}...)
	}
	for _, tt := range tests {
		got, err := run(t, tool, `{"path":`+quote(tt.path)+`}`)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, %v; want error containing %q", tt.path, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") && !strings.Contains(tt.path, "secret") {
			t.Errorf("%q: error leaks outside content: %v", tt.path, err)
		}
	}
}

func TestReadFileDirectoryListing(t *testing.T) {
	tool, err := ReadFile(workspace(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(t, tool, `{"path":"sub"}`)
	if err == nil || !strings.Contains(err.Error(), "deeper/") || !strings.Contains(err.Error(), "nested.txt") || !strings.Contains(err.Error(), `"sub/nested.txt"`) {
		t.Errorf("listing of sub = %v", err)
	}
}

func TestReadFileArguments(t *testing.T) {
	tool, err := ReadFile(workspace(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ args, want string }{
		{`{}`, `missing required property "path"`},
		{`{"path":"hello.txt","max_bytes":0}`, "must be >= 1"},
		{`{"path":"hello.txt","max_bytes":2000000}`, "must be <= 1048576"},
		{`{"path":"hello.txt","max_bytes":1.5}`, "must be an integer"},
		{`{"path":"hello.txt","mode":"x"}`, `unexpected property "mode"`},
	} {
		if _, err := run(t, tool, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.args, err, tt.want)
		}
	}
	// Without the schema in front, Run still refuses bad input.
	for _, tt := range []struct{ args, want string }{
		{`{"path":""}`, "path is required"},
		{`{"path":"hello.txt","max_bytes":0}`, "max_bytes must be a whole number"},
		{`{"path":"hello.txt","max_bytes":2.5}`, "max_bytes must be a whole number"},
		{`{"path":7}`, "invalid arguments"},
		{`[]`, "invalid arguments"},
	} {
		if _, err := tool.Run(context.Background(), json.RawMessage(tt.args)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Run(%s): err = %v, want %q", tt.args, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Run(ctx, json.RawMessage(`{"path":"hello.txt"}`)); err == nil {
		t.Error("Run with a cancelled context should fail")
	}
}

func TestReadFileRoot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	write(t, file, "x")
	for _, root := range []string{"", filepath.Join(dir, "missing"), file} {
		if _, err := ReadFile(root); err == nil {
			t.Errorf("ReadFile(%q) should fail", root)
		}
	}
	// A relative root is fixed at construction, not resolved per call
	// against whatever the working directory later becomes.
	t.Chdir(dir)
	mkdir(t, "ws")
	write(t, filepath.Join("ws", "a.txt"), "a")
	tool, err := ReadFile("ws")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if got, err := run(t, tool, `{"path":"a.txt"}`); err != nil || got.(readFileResult).Content != "a" {
		t.Errorf("relative root after chdir: %v, %v", got, err)
	}
}

func TestTrimPartialRune(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"abc", "abc"},
		{"a\xc3", "a"},
		{"a\xe2\x82", "a"},
		{"a€", "a€"},
		{"\xf0\x9f\x98", ""},
		{"", ""},
	} {
		if got := string(trimPartialRune([]byte(tt.in))); got != tt.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}
