package layout

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Product code is held in pieces a reader can take in at once: past these sizes a file or a
// function is split along its seams (docs/architecture.md).
const (
	maxFileLines = 500
	maxFuncLines = 80
)

// productFiles are the module's product source files, as the Go tool lists them: every non-test
// .go file of every package (other platforms' too) outside hack/ and test/.
func productFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, p := range list(t, "./...") {
		if strings.HasPrefix(p.ImportPath, module+"/hack/") || strings.HasPrefix(p.ImportPath, module+"/test/") {
			continue
		}
		for _, names := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles} {
			for _, name := range names {
				if !strings.HasSuffix(name, "_test.go") {
					files = append(files, filepath.Join(p.Dir, name))
				}
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no product file listed")
	}
	return files
}

// readSource reads a source file as the go command does: through the overlay in GOFLAGS, if
// any (hack/mutate's rewrite of the file then stands in its place).
func readSource(t *testing.T, path string) []byte {
	t.Helper()
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		name, overlay, ok := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		if !ok || name != "-overlay" && name != "overlay" {
			continue
		}
		b, err := os.ReadFile(overlay)
		if err != nil {
			t.Fatalf("the overlay in GOFLAGS: %v", err)
		}
		var o struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("the overlay %s: %v", overlay, err)
		}
		for from, to := range o.Replace {
			if !filepath.IsAbs(from) {
				from = filepath.Join("../..", from) // the go command runs from the module root
			}
			if sameFile(from, path) {
				path = to
			}
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// relative names a file from the module root, as docs and reviews do.
func relative(path string) string {
	root, _ := filepath.Abs("../..")
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

// lineCount counts lines as wc -l does, a last line without its newline included.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// No product file is over maxFileLines lines.
func TestNoProductFileOver500Lines(t *testing.T) {
	for _, path := range productFiles(t) {
		if n := lineCount(readSource(t, path)); n > maxFileLines {
			t.Errorf("%s is %d lines (over %d): split it along its seams, a file per concern", relative(path), n, maxFileLines)
		}
	}
}

// No product function or method is over maxFuncLines lines, from its func line to its closing
// brace (its doc comment not counted).
func TestNoProductFuncOver80Lines(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range productFiles(t) {
		f, err := parser.ParseFile(fset, path, readSource(t, path), parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: func %s is %d lines (over %d): extract what it does in steps into functions named for them",
					relative(path), start.Line, funcName(fn), n, maxFuncLines)
			}
		}
	}
}

// funcName is fn's name, a method's with its receiver's type.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr: // a generic type's method
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
