// Package layout checks the shape docs/architecture.md promises, from the Go tool's own view of
// the packages: the public packages under pkg/ stand alone (nothing of internal/ in their
// dependencies, so no exported field or signature can have an internal type), and only the
// command package imports cobra, and it starts no goroutine.
package layout

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kubectl-informer/kubectl-informer"

type listed struct {
	ImportPath     string
	Name           string
	Dir            string
	Doc            string
	Imports        []string
	Deps           []string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string // other platforms' files: product code too
	TestGoFiles    []string
	XTestGoFiles   []string
}

// list runs `go list -json` from the module root (the test's directory is hack/layout). It
// honours GOFLAGS, so hack/mutate's overlay reaches it.
func list(t *testing.T, args ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list",
		"-json=ImportPath,Name,Dir,Doc,Imports,Deps,GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v listed nothing", args)
	}
	return pkgs
}

// A controller author imports pkg/watch, pkg/replay or pkg/printer without the internal
// packages: none is among their dependencies.
func TestPkgImportsNoInternal(t *testing.T) {
	for _, p := range list(t, "./pkg/...") {
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module+"/internal/") {
				t.Errorf("%s depends on %s: pkg/ must stand alone", p.ImportPath, d)
			}
		}
	}
}

// Only internal/cmd turns flags into a configuration: no other package imports cobra.
func TestOnlyCmdImportsCobra(t *testing.T) {
	for _, p := range list(t, "./...") {
		if p.ImportPath == module+"/internal/cmd" {
			continue
		}
		for _, i := range p.Imports {
			if strings.HasPrefix(i, "github.com/spf13/cobra") {
				t.Errorf("%s imports %s: only internal/cmd may", p.ImportPath, i)
			}
		}
	}
}
