package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

const (
	defaultMaxBytes = 64 << 10
	maxMaxBytes     = 1 << 20
)

var readFileSchema = compactJSON(`{
	"type": "object",
	"properties": {
		"path": {
			"type": "string",
			"minLength": 1,
			"maxLength": 4096,
			"description": "Path of the file relative to the workspace directory, for example \"README.md\" or \"notes/todo.txt\". Use \".\" to list the workspace."
		},
		"max_bytes": {
			"type": "integer",
			"minimum": 1,
			"maximum": 1048576,
			"default": 65536,
			"description": "Read at most this many bytes; longer files are cut off and marked truncated."
		}
	},
	"required": ["path"],
	"additionalProperties": false
}`)

// ReadFile returns the "read_file" tool, which reads UTF-8 text files inside
// root and nowhere else. root must be an existing directory.
//
// Confinement is enforced by os.Root, which resolves every path component
// itself and refuses anything that leaves root: absolute paths, "..", and
// symbolic links pointing outside (links that stay inside are followed).
// root is opened afresh on each call, so the tool holds no descriptor and
// follows root if it is replaced.
func ReadFile(root string) (dispatch.Tool, error) {
	if root == "" {
		return dispatch.Tool{}, errors.New("read_file: root directory is empty; give the directory whose files the tool may read")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return dispatch.Tool{}, fmt.Errorf("read_file: resolving root %q: %w", root, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return dispatch.Tool{}, fmt.Errorf("read_file: root %q must be an existing directory: %w", root, err)
	}
	if !fi.IsDir() {
		return dispatch.Tool{}, fmt.Errorf("read_file: root %q is not a directory; give the directory whose files the tool may read", root)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return dispatch.Tool{}, fmt.Errorf("read_file: opening root %q: %w", root, err)
	}
	r.Close()
	return dispatch.Tool{
		Spec: hooks.ToolSpec{
			Name: "read_file",
			Description: "Read a text file from the workspace directory and return its contents, to open, show, view or look at a file. " +
				"Give the path relative to the workspace, such as \"README.md\" or \"notes/todo.txt\"; reading \".\" or another directory lists its entries. " +
				"Only files inside the workspace can be read, binary files are refused, and long files are truncated to max_bytes.",
			InputSchema: readFileSchema,
		},
		Run: func(ctx context.Context, raw json.RawMessage) (any, error) {
			return runReadFile(ctx, abs, raw)
		},
	}, nil
}

type readFileArgs struct {
	Path string `json:"path"`
	// A float, because models write 100.0 as often as 100 and the schema
	// accepts both as integers.
	MaxBytes *float64 `json:"max_bytes"`
}

type readFileResult struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
	Size      int64  `json:"size"`
}

func runReadFile(ctx context.Context, root string, raw json.RawMessage) (any, error) {
	var args readFileArgs
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	limit := defaultMaxBytes
	if args.MaxBytes != nil {
		m := *args.MaxBytes
		if m != math.Trunc(m) || m < 1 || m > maxMaxBytes {
			return nil, fmt.Errorf("max_bytes must be a whole number from 1 to %d, got %v", maxMaxBytes, m)
		}
		limit = int(m)
	}
	rel, err := localPath(args.Path)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("the workspace directory is not available: %v", err)
	}
	defer r.Close()

	fi, err := r.Stat(rel)
	if err != nil {
		return nil, describeOpenError(root, rel, err)
	}
	if fi.IsDir() {
		return nil, directoryError(r, rel)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file (it is a %s); only text files can be read", rel, kindOf(fi.Mode()))
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, describeOpenError(root, rel, err)
	}
	defer f.Close()
	// Stat again through the open file: the path may have been swapped
	// for a directory or device between the two lookups.
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("cannot read %q: %v", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file; only text files can be read", rel)
	}

	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %q: %v", rel, err)
	}
	truncated := len(data) > limit
	if truncated {
		data = trimPartialRune(data[:limit])
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, fmt.Errorf("%q is a binary file (not UTF-8 text); read_file only returns text", rel)
	}
	size := fi.Size()
	if !truncated && int64(len(data)) > size {
		size = int64(len(data)) // files like those in /proc report size 0
	}
	return readFileResult{Path: filepath.ToSlash(rel), Content: string(data), Truncated: truncated, Size: size}, nil
}

// localPath turns the model's path into a clean relative one, rejecting
// escapes up front so the error can say what to do instead. os.Root would
// refuse them anyway.
func localPath(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is required; give a file path relative to the workspace, such as \"README.md\"")
	}
	native := filepath.FromSlash(p)
	if filepath.IsAbs(native) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", fmt.Errorf("path %q is absolute; give a path relative to the workspace directory, such as \"notes/todo.txt\"", p)
	}
	clean := filepath.Clean(native)
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("path %q leads outside the workspace directory; only files inside it can be read", p)
	}
	return clean, nil
}

func describeOpenError(root, rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such file %q in the workspace directory; check the name, or read \".\" to list the files", filepath.ToSlash(rel))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied reading %q", filepath.ToSlash(rel))
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("no such file %q: part of the path before the last slash is a file, not a directory", filepath.ToSlash(rel))
	case escapesRoot(root, rel):
		return fmt.Errorf("%q is a symbolic link (or passes through one) that leads outside the workspace directory; only files inside it can be read", filepath.ToSlash(rel))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path and internal operation name would only repeat or confuse
	}
	return fmt.Errorf("cannot read %q: %v", filepath.ToSlash(rel), err)
}

// escapesRoot only explains a refusal os.Root already made; it is not the
// security check, so its own races do not matter.
func escapesRoot(root, rel string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	target, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path != "" {
			// A dangling link: judge by where resolution got to.
			target = pe.Path
		} else {
			return false
		}
	}
	back, err := filepath.Rel(realRoot, target)
	return err != nil || !filepath.IsLocal(back)
}

func directoryError(r *os.Root, rel string) error {
	name := filepath.ToSlash(rel)
	d, err := r.Open(rel)
	if err != nil {
		return fmt.Errorf("%q is a directory; give the path of a file inside it", name)
	}
	defer d.Close()
	entries, err := d.ReadDir(500)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%q is a directory; give the path of a file inside it", name)
	}
	if len(entries) == 0 {
		return fmt.Errorf("%q is an empty directory; there is nothing to read", name)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
		if e.IsDir() {
			names[i] += "/"
		}
	}
	slices.Sort(names)
	const show = 50
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	prefix := ""
	if rel != "." {
		prefix = name + "/"
	}
	return fmt.Errorf("%q is a directory; read one of its files by path (such as %q). Entries: %s%s",
		name, prefix+firstFile(names), strings.Join(names, ", "), more)
}

func firstFile(names []string) string {
	for _, n := range names {
		if !strings.HasSuffix(n, "/") {
			return n
		}
	}
	return names[0]
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// trimPartialRune drops an incomplete UTF-8 sequence left at the end by
// truncation, so that cutting text mid-character is not mistaken for
// binary content.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
