package layout

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command package turns flags into a typed configuration and ends each command in one call
// into its orchestrator (internal/watchrun, internal/replayrun, internal/reenactrun,
// internal/report): no file of it (tests aside) starts a goroutine.
func TestCmdStartsNoGoroutine(t *testing.T) {
	files, err := filepath.Glob("../../internal/cmd/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in internal/cmd: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, source(t, f), parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a go statement in internal/cmd: start it in the command's orchestrator, which the command calls once", fset.Position(g.Pos()))
			}
			return true
		})
	}
}

// source is the text of the file at path as the Go tool sees it: the replacement GOFLAGS'
// -overlay names for it, if any (hack/mutate's rewrites reach this test that way).
func source(t *testing.T, path string) []byte {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range strings.Fields(os.Getenv("GOFLAGS")) {
		overlay, ok := strings.CutPrefix(flag, "-overlay=")
		if !ok {
			continue
		}
		b, err := os.ReadFile(overlay)
		if err != nil {
			t.Fatal(err)
		}
		var o struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		for from, to := range o.Replace { // hack/mutate names them by absolute paths
			if from == abs {
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
