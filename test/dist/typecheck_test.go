package dist

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestReleasePlatformsTypeCheck type-checks the plugin and every package it imports, from
// source, for each release platform TestDist does not build in this run (DIST_PLATFORMS=host:
// all but this machine's): the platform's own files (internal/input's poll_other.go,
// internal/reenactrun's controlplane_windows.go, the dependencies' syscall code) must compile
// there. It is go/types over the sources, as gopls reads them, not a compile: about 10 seconds
// a platform instead of 4.5 CPU-minutes; what it does not check (code generation and the link)
// DIST_PLATFORMS=all does, before a release.
func TestReleasePlatformsTypeCheck(t *testing.T) {
	t.Parallel() // beside TestDist: both mostly wait on the go command
	root := moduleRoot(t)
	var check [][2]string
	if hostOnly(t) {
		_, host := hostTarget(t)
		for _, tg := range targets {
			if tg != host {
				check = append(check, tg)
			}
		}
	}
	if len(check) == 0 {
		t.Log("DIST_PLATFORMS=all: TestDist builds every release platform")
	}
	for _, tg := range check {
		t.Run(tg[0]+"_"+tg[1], func(t *testing.T) {
			errs, n := typeCheck(root, tg[0], tg[1])
			if len(errs) > 0 {
				t.Errorf("%s/%s: %d errors type-checking ./cmd/kubectl-informer and its imports:\n%s", tg[0], tg[1], len(errs), strings.Join(errs, "\n"))
			}
			// The plugin imports over a thousand packages: far fewer means the load stopped short.
			if n < 500 {
				t.Errorf("%s/%s: only %d packages loaded", tg[0], tg[1], n)
			}
		})
	}
}

// typeCheck loads ./cmd/kubectl-informer with every import, from source, for goos/goarch with cgo
// off (as the release builds), and returns the errors (at most 20) and how many packages it read.
func typeCheck(root, goos, goarch string) (errs []string, n int) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax,
		Dir:  root,
		Env:  append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, "./cmd/kubectl-informer")
	if err != nil {
		return []string{err.Error()}, 0
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		n++
		for _, e := range p.Errors {
			if len(errs) < 20 {
				errs = append(errs, fmt.Sprintf("%s: %v", p.PkgPath, e))
			}
		}
	})
	return errs, n
}
