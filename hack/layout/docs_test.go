package layout

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every public package says what it is for twice: in its package doc comment ("Package name
// ..."), and in a runnable Example whose // Output: shows it at work (go test runs it, so it
// cannot drift from the code).
func TestPublicPackagesDocumentedWithExample(t *testing.T) {
	for _, p := range list(t, "./pkg/...") {
		if !strings.HasPrefix(p.Doc, "Package "+p.Name+" ") {
			t.Errorf("%s has no package doc comment starting %q", p.ImportPath, "Package "+p.Name)
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range append(append([]string{}, p.TestGoFiles...), p.XTestGoFiles...) {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, readSource(t, path), parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		found := false
		for _, ex := range doc.Examples(files...) {
			found = found || strings.TrimSpace(ex.Output) != ""
		}
		if !found {
			t.Errorf("%s has no runnable Example with an // Output: comment (example_test.go, package %s_test)", p.ImportPath, p.Name)
		}
	}
}
