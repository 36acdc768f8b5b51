package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxEventFields bounds watch.Event: a header and one payload per family
// (docs/architecture.md, "The event"), not a union of every line's fields.
const maxEventFields = 15

// watch.Event is a header and one payload per family: at most maxEventFields fields.
func TestEventFields(t *testing.T) {
	fset := token.NewFileSet()
	path := filepath.Join("..", "..", "pkg", "watch", "event.go")
	f, err := parser.ParseFile(fset, path, readSource(t, path), 0)
	if err != nil {
		t.Fatal(err)
	}
	var st *ast.StructType
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "Event" {
			st, _ = ts.Type.(*ast.StructType)
		}
		return st == nil
	})
	if st == nil {
		t.Fatal("pkg/watch/event.go declares no struct Event")
	}
	n := 0
	for _, fl := range st.Fields.List {
		n += max(1, len(fl.Names))
	}
	if n > maxEventFields {
		t.Errorf("watch.Event has %d fields, over %d: a line's own fields go in its family's payload (docs/architecture.md)", n, maxEventFields)
	}
}
