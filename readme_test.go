package hookhost_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEEmbeddingMatchesExample holds README.md's embedding snippet to
// ExampleOpen's body, which go test runs, so the snippet runs as written.
// Indentation and blank lines aside, the two are the same text.
func TestREADMEEmbeddingMatchesExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippet := fencedGoAfter(t, string(readme), "## Embedding hookhost in a Go program")

	src, err := os.ReadFile(filepath.Join(repoRoot, "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var body string
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "ExampleOpen" {
			body = string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	if body == "" {
		t.Fatal("example_test.go has no ExampleOpen")
	}
	var example []string
	for _, line := range codeLines(body) {
		if !strings.HasPrefix(line, "// Output:") {
			example = append(example, line)
		}
	}

	readmeLines := codeLines(snippet)
	if strings.Join(readmeLines, "\n") != strings.Join(example, "\n") {
		t.Errorf("README.md's embedding snippet and ExampleOpen differ; make them the same.\nREADME.md:\n%s\n\nExampleOpen:\n%s",
			strings.Join(readmeLines, "\n"), strings.Join(example, "\n"))
	}
}

// fencedGoAfter is the first ```go block of the section under heading.
func fencedGoAfter(t *testing.T, doc, heading string) string {
	t.Helper()
	blocks := fencedBlocks(readmeSection(t, doc, heading))["go"]
	if len(blocks) == 0 {
		t.Fatalf("README.md's %q has no ```go block", heading)
	}
	return blocks[0]
}

// readmeSection is the text under heading (a whole line, such as
// "## Writing a plugin") up to the next heading of any level; a line in a
// code block that starts with "#" is a comment, not a heading.
func readmeSection(t *testing.T, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	var section strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(rest, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			break
		}
		section.WriteString(line)
	}
	return section.String()
}

// fencedBlocks are the fenced code blocks of text by their language tag,
// in order.
func fencedBlocks(text string) map[string][]string {
	blocks := map[string][]string{}
	for _, m := range regexp.MustCompile("(?s)```(\\w+)\n(.*?)```").FindAllStringSubmatch(text, -1) {
		blocks[m[1]] = append(blocks[m[1]], m[2])
	}
	return blocks
}

// codeLines are the non-blank lines of src without their indentation.
func codeLines(src string) []string {
	var lines []string
	for _, line := range strings.Split(src, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}
