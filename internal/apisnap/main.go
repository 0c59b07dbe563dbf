// Command apisnap writes, under api/, the exported API of every public
// package of the module, so that a change to the public surface shows up
// as a diff to review.
//
// A public package is a directory of the module, outside any internal/,
// testdata/ or node_modules/ directory, whose non-test Go files are not
// package main and declare at least one exported name. Its snapshot is
// api/<path with "/" replaced by "_">.txt (api/hookhost.txt for the module
// root), for example api/gateway_dialect.txt.
//
// A snapshot holds one declaration a line, sorted, without doc comments so
// that editing a comment does not change it: funcs, methods on exported
// types, types with their exported fields and interface methods, consts
// and vars. Files are read whatever their build constraints, so the
// declarations of every OS appear. Generated protobuf code (*.pb.go) is
// left out: its surface follows from the .proto it was generated from,
// which is reviewed instead. Other generated files, such as the SDK's
// per-hook interfaces written from the catalogue, are public API like any
// other and are recorded.
//
// Usage:
//
//	go run ./internal/apisnap -w   # rewrite api/ (make api)
//	go run ./internal/apisnap      # list the packages and their counts of exported names
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// apiDir is where the snapshots live, relative to the module root.
const apiDir = "api"

func main() {
	write := flag.Bool("w", false, "rewrite the snapshots under api/")
	flag.Parse()
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	snaps, err := snapshots(root)
	if err != nil {
		fail(err)
	}
	if !*write {
		for _, name := range sortedKeys(snaps) {
			names, methods := countNames(snaps[name])
			fmt.Printf("%-36s %4d names %4d methods\n", name, names, methods)
		}
		return
	}
	if err := writeSnapshots(filepath.Join(root, apiDir), snaps); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "apisnap:", err)
	os.Exit(1)
}

// moduleRoot is the nearest directory upward from the working directory
// holding a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it (run from inside the module)")
		}
		dir = parent
	}
}

// writeSnapshots makes dir hold exactly the snapshots: stale .txt files
// (of a package removed or made internal) are deleted.
func writeSnapshots(dir string, snaps map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := readSnapshots(dir)
	if err != nil {
		return err
	}
	for name := range old {
		if _, ok := snaps[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, text := range snaps {
		if old[name] == text {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readSnapshots returns the .txt files of dir by name.
func readSnapshots(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	snaps := make(map[string]string)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		snaps[e.Name()] = string(b)
	}
	return snaps, nil
}

// snapshots walks the module at root and returns the snapshot of every
// public package, by file name under api/.
func snapshots(root string) (map[string]string, error) {
	snaps := make(map[string]string)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if name == "internal" || name == "testdata" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			// A nested module is not part of this one.
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		lines, err := packageAPI(path)
		if err != nil {
			return err
		}
		if len(lines) == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		snaps[snapshotName(rel)] = strings.Join(lines, "\n") + "\n"
		return nil
	})
	return snaps, err
}

// snapshotName is the api/ file name of the package in directory rel.
func snapshotName(rel string) string {
	if rel == "." {
		return "hookhost.txt"
	}
	return strings.ReplaceAll(filepath.ToSlash(rel), "/", "_") + ".txt"
}

// packageAPI returns the sorted declarations of the exported names of the
// package in dir, or nothing when dir holds no public package.
func packageAPI(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	seen := make(map[string]bool)
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || (ast.IsGenerated(f) && strings.HasSuffix(n, ".pb.go")) {
			continue
		}
		for _, l := range fileAPI(fset, f) {
			seen[l] = true
		}
	}
	return sortedKeys(seen), nil
}

// fileAPI returns the declarations of the exported names of one file.
func fileAPI(fset *token.FileSet, f *ast.File) []string {
	var lines []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if l, ok := funcLine(fset, d); ok {
				lines = append(lines, l)
			}
		case *ast.GenDecl:
			lines = append(lines, genLines(fset, d)...)
		}
	}
	return lines
}

func funcLine(fset *token.FileSet, d *ast.FuncDecl) (string, bool) {
	if !d.Name.IsExported() {
		return "", false
	}
	sig := strings.TrimPrefix(node(fset, d.Type), "func")
	if d.Recv == nil {
		return "func " + d.Name.Name + sig, true
	}
	recv := d.Recv.List[0].Type
	if !ast.IsExported(baseTypeName(recv)) {
		return "", false
	}
	return "func (" + node(fset, recv) + ") " + d.Name.Name + sig, true
}

// baseTypeName is the name of a receiver or embedded type without
// pointer, package and type parameters.
func baseTypeName(x ast.Expr) string {
	for {
		switch t := x.(type) {
		case *ast.StarExpr:
			x = t.X
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		case *ast.ParenExpr:
			x = t.X
		case *ast.SelectorExpr: // an embedded type of another package
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func genLines(fset *token.FileSet, d *ast.GenDecl) []string {
	var lines []string
	switch d.Tok {
	case token.TYPE:
		for _, s := range d.Specs {
			lines = append(lines, typeLines(fset, s.(*ast.TypeSpec))...)
		}
	case token.CONST, token.VAR:
		kw := d.Tok.String()
		// In a const group a spec without type or value repeats the
		// previous one's (iota), so its type carries over.
		var lastType ast.Expr
		for _, s := range d.Specs {
			vs := s.(*ast.ValueSpec)
			typ := vs.Type
			if d.Tok == token.CONST {
				if typ == nil && len(vs.Values) == 0 {
					typ = lastType
				} else {
					lastType = vs.Type
				}
			}
			for i, n := range vs.Names {
				if !n.IsExported() {
					continue
				}
				l := kw + " " + n.Name
				if typ != nil {
					l += " " + node(fset, typ)
				}
				// Const values are part of the contract (hook names,
				// versions); var initialisers are not.
				if d.Tok == token.CONST && i < len(vs.Values) {
					l += " = " + node(fset, vs.Values[i])
				}
				lines = append(lines, l)
			}
		}
	}
	return lines
}

func typeLines(fset *token.FileSet, s *ast.TypeSpec) []string {
	if !s.Name.IsExported() {
		return nil
	}
	name := s.Name.Name
	head := "type " + name
	if s.TypeParams != nil {
		var params []string
		for _, f := range s.TypeParams.List {
			var names []string
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
			params = append(params, strings.Join(names, ", ")+" "+node(fset, f.Type))
		}
		head += "[" + strings.Join(params, ", ") + "]"
	}
	if s.Assign.IsValid() {
		return []string{head + " = " + node(fset, s.Type)}
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		lines := []string{head + " struct"}
		for _, f := range t.Fields.List {
			typ := node(fset, f.Type)
			if len(f.Names) == 0 {
				if ast.IsExported(baseTypeName(f.Type)) {
					lines = append(lines, "field "+name+" embeds "+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					l := "field " + name + "." + n.Name + " " + typ
					if f.Tag != nil {
						l += " " + f.Tag.Value
					}
					lines = append(lines, l)
				}
			}
		}
		return lines
	case *ast.InterfaceType:
		lines := []string{head + " interface"}
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				// An embedded interface or a type-set term.
				lines = append(lines, "method "+name+" embeds "+node(fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					sig := strings.TrimPrefix(node(fset, m.Type), "func")
					lines = append(lines, "method "+name+"."+n.Name+sig)
				}
			}
		}
		return lines
	default:
		return []string{head + " " + node(fset, s.Type)}
	}
}

// node prints x on one line, without comments.
func node(fset *token.FileSet, x any) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, x); err != nil {
		panic(err) // the printer fails only on a broken writer or a bad node
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// countNames counts the package-level exported names a snapshot declares
// (funcs, types, consts, vars) and, apart, the methods on exported types;
// fields and interface methods are parts of their type.
func countNames(snapshot string) (names, methods int) {
	for _, l := range strings.Split(snapshot, "\n") {
		switch {
		case strings.HasPrefix(l, "func ("):
			methods++
		case strings.HasPrefix(l, "func "), strings.HasPrefix(l, "type "),
			strings.HasPrefix(l, "const "), strings.HasPrefix(l, "var "):
			names++
		}
	}
	return names, methods
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return slices.Clip(keys)
}
