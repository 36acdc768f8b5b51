package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every mutation still applies to the tree and names tests that exist, so that a refactoring
// that moves its text fails here, in `make unit`, and not only in `make mutate`.
func TestMutationsApplyAndNameRealTests(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkApply(root, mutations); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range mutations {
		if names[m.name] {
			t.Errorf("two mutations named %q", m.name)
		}
		names[m.name] = true
		if m.old == m.new || len(m.run) == 0 {
			t.Errorf("%q: no change, or no test to kill it", m.name)
		}
		// hack/layout's tests read the whole tree's imports: their mutations are anywhere.
		if m.pkg != "./hack/layout" && !strings.HasPrefix(filepath.ToSlash(filepath.Join(".", filepath.Dir(m.file))), strings.TrimPrefix(m.pkg, "./")) {
			t.Errorf("%q: %s is not in %s", m.name, m.file, m.pkg)
		}
		tests, err := filepath.Glob(filepath.Join(root, m.pkg, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		var src strings.Builder
		for _, f := range tests {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
		for _, name := range m.run {
			if !regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(name) + `\(t \*testing\.T\)`).MatchString(src.String()) {
				t.Errorf("%q: %s has no test %s", m.name, m.pkg, name)
			}
		}
	}
}

func TestSelectMutations(t *testing.T) {
	if got, err := selectMutations(mutations, "tombstone"); err != nil || len(got) < 2 {
		t.Errorf("-run tombstone: %d mutations, %v", len(got), err)
	}
	if _, err := selectMutations(mutations, "no such lie"); err == nil {
		t.Error("-run matching nothing accepted")
	}
	if _, err := selectMutations(mutations, "("); err == nil {
		t.Error("a bad -run accepted")
	}
}

// docs/reliability.md lists every lie with the tests that kill it, and every test it cites as
// proof exists.
func TestReliabilityDocTrueToTests(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutations {
		var tests []string
		for _, r := range m.run {
			tests = append(tests, "`"+r+"`")
		}
		if row := "| " + m.name + " | " + strings.Join(tests, ", ") + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/reliability.md lacks the row\n%s", row)
		}
	}
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	for _, dir := range []string{"pkg", "internal", "cmd", "hack", "test"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			for _, m := range funcRE.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)[`/*]").FindAllSubmatch(doc, -1) {
		name := string(m[1])
		if strings.HasSuffix(string(m[0]), "*") {
			found := false
			for d := range defined {
				found = found || strings.HasPrefix(d, name)
			}
			if !found {
				t.Errorf("docs/reliability.md cites %s*, and no test starts so", name)
			}
			continue
		}
		if !defined[name] {
			t.Errorf("docs/reliability.md cites %s, which is no test", name)
		}
	}
}

// TestTryAllInOrder: two workers finish out of order (the first mutation is the slowest), and
// the outcomes still come in the mutations' order, each from its own try; the error's outcome is
// the last one sent.
func TestTryAllInOrder(t *testing.T) {
	ms := make([]mutation, 6)
	for i := range ms {
		ms[i] = mutation{name: fmt.Sprint("m", i)}
	}
	release := make(chan struct{})
	tryOne := func(i int, m mutation) (result, error) {
		if m.name == "m0" {
			<-release // held until m1 has finished in the other worker
		}
		if m.name == "m1" {
			defer close(release)
		}
		if m.name == "m3" {
			return result{}, errors.New("boom")
		}
		return result{output: fmt.Sprint(i, ":", m.name)}, nil
	}
	var got []string
	var errs int
	for o := range tryAll(2, ms, tryOne) {
		if o.err != nil {
			errs++
			got = append(got, "error")
			continue
		}
		got = append(got, o.output[strings.Index(o.output, ":")+1:])
	}
	if want := []string{"m0", "m1", "m2", "error"}; !slices.Equal(got, want) || errs != 1 {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}
