package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

type outcome string

const (
	pass outcome = "pass"
	fail outcome = "fail"
	skip outcome = "skip"
)

// packageTest stands for what failed outside any test (TestMain, a build error, a timeout's panic).
const packageTest = "(package)"

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action string
	Test   string
	Output string
}

// runResult is one run's outcome of each top-level test, and the output of each failed one.
type runResult struct {
	file   string
	tests  map[string]outcome
	output map[string]*strings.Builder
}

func (r *runResult) count(o outcome) int {
	n := 0
	for _, got := range r.tests {
		if got == o {
			n++
		}
	}
	return n
}

// parseRun reads go test -json. Subtests count toward their top-level test (its own pass or
// fail says it); a package that fails with no failed test (TestMain, a panic, the timeout) is
// recorded as packageTest.
func parseRun(r io.Reader) (*runResult, error) {
	res := &runResult{tests: map[string]outcome{}, output: map[string]*strings.Builder{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	pkgFailed := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // a build error's text, say
		}
		var ev testEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("not go test -json: %.100q: %w", line, err)
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		if top == "" {
			top = packageTest
		}
		switch ev.Action {
		case "output":
			b := res.output[top]
			if b == nil {
				b = &strings.Builder{}
				res.output[top] = b
			}
			b.WriteString(ev.Output)
		case "pass", "fail", "skip":
			if ev.Test == "" {
				pkgFailed = pkgFailed || ev.Action == "fail"
				continue
			}
			if ev.Test == top {
				res.tests[top] = outcome(ev.Action)
			}
		case "run":
			if ev.Test == top {
				res.tests[top] = fail // until it says otherwise: a test cut off by a crash failed
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if pkgFailed && res.count(fail) == 0 {
		res.tests[packageTest] = fail
	}
	return res, nil
}

// tally is every run's outcome of every test.
type tally struct {
	runs      []*runResult
	neighbour map[int]bool // runs beside the CPU neighbour
}

func newTally() *tally { return &tally{neighbour: map[int]bool{}} }

func (t *tally) add(i int, withNeighbour bool, r *runResult) {
	t.runs = append(t.runs, r)
	t.neighbour[i] = withNeighbour
}

type failure struct {
	test, file, output string
	run                int
}

// flaky lists every failed test run, with the tail of its output.
func (t *tally) flaky() []failure {
	var out []failure
	for i, r := range t.runs {
		for _, name := range sortedNames(r.tests) {
			if r.tests[name] != fail {
				continue
			}
			text := ""
			if b := r.output[name]; b != nil {
				text = tail(b.String(), 60)
			}
			out = append(out, failure{test: name, run: i + 1, file: r.file, output: text})
		}
	}
	return out
}

// table is the pass rates as markdown: one row a test, with the runs it failed in (* beside
// the neighbour). Skipped runs count neither way.
func (t *tally) table(cfg config) string {
	all := map[string]bool{}
	for _, r := range t.runs {
		for name := range r.tests {
			all[name] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs of go test -run %q %s", len(t.runs), cfg.run, cfg.pkg)
	if cfg.burnRun > 0 && cfg.burnRun <= len(t.runs) {
		fmt.Fprintf(&b, "; run %d beside a neighbour burning every core", cfg.burnRun)
	}
	b.WriteString("\n\n| test | passed | pass rate | failed in runs |\n|---|---|---|---|\n")
	for _, name := range sortedNames(all) {
		passed, ran := 0, 0
		var failedIn []string
		for i, r := range t.runs {
			switch r.tests[name] {
			case pass:
				passed++
				ran++
			case fail:
				ran++
				mark := fmt.Sprint(i + 1)
				if t.neighbour[i+1] {
					mark += "*"
				}
				failedIn = append(failedIn, mark)
			}
		}
		rate := "skipped"
		if ran > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*float64(passed)/float64(ran))
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %s | %s |\n", name, passed, ran, rate, strings.Join(failedIn, ", "))
	}
	return b.String()
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
