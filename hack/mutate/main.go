// Command mutate checks that the unit tests catch the lies kubectl-informer must never tell.
// For each mutation in mutations.go (a small source rewrite: an unchanged relist delivery read
// as a resync, a delete dropped, the queue depth read from the adds counter, ...) it rewrites a
// copy of the tree, runs the unit tests that must kill it, and restores the file. It exits 1 if
// a mutation survives (its tests pass), no longer applies, or does not compile. `make mutate`
// runs it from the module root:
//
//	go run ./hack/mutate [-run REGEXP] [-v] [-j N] [-baseline=false]
//
// The mutated file is handed to go test as an overlay (-overlay: the compiler reads the rewrite
// in its place), so the working tree is never touched and every package but the mutated ones
// and their dependents comes from the build cache that go build and go vet filled. N workers
// (default 2, -j) try mutations at once; verdicts print in the mutations' order.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	run := flag.String("run", "", "only the mutations whose name matches this regular expression")
	verbose := flag.Bool("v", false, "print the output of the tests of every mutation")
	timeout := flag.Duration("timeout", 2*time.Minute, "go test -timeout for each mutation (a mutation that hangs a test is killed by it)")
	jobs := flag.Int("j", 2, "mutations tried at once, each in a copy of the tree of its own")
	baseline := flag.Bool("baseline", true, "first run the selected tests on the unmutated tree (make test passes false: its unit tests, all of them, have just passed on it)")
	flag.Parse()
	if *jobs < 1 {
		fmt.Fprintln(os.Stderr, "mutate: -j must be at least 1")
		os.Exit(2)
	}
	if err := mutate(os.Stdout, *run, *verbose, *timeout, *jobs, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func mutate(out io.Writer, run string, verbose bool, timeout time.Duration, jobs int, baseline bool) error {
	start := time.Now()
	selected, err := selectMutations(mutations, run)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if err := checkApply(root, selected); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kubectl-informer-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The tests must pass on the unmutated tree, or every mutation would look killed. They run
	// every selected test at once: on a loaded machine that takes longer than one mutation's.
	if baseline {
		if res := goTest(root, "", 3*timeout, allPackages(selected), allTests(selected)); res.err != nil || res.failed {
			return fmt.Errorf("the tests fail without any mutation:\n%s", res.output)
		}
		fmt.Fprintf(out, "the tests pass without any mutation (%.0fs)\n", time.Since(start).Seconds())
	}
	var survived, broken []string
	i := 0
	tryOne := func(i int, m mutation) (result, error) {
		return try(root, filepath.Join(tmp, strconv.Itoa(i)), m, timeout)
	}
	for o := range tryAll(min(jobs, len(selected)), selected, tryOne) {
		m := selected[i]
		i++
		if o.err != nil {
			return o.err
		}
		res := o.result
		verdict := "killed by " + strings.Join(res.killers, ", ")
		switch {
		case res.buildFailed:
			verdict = "DOES NOT COMPILE (fix the mutation)"
			broken = append(broken, m.name)
		case !res.failed:
			verdict = "SURVIVED: " + strings.Join(m.run, ", ") + " pass"
			survived = append(survived, m.name)
		}
		fmt.Fprintf(out, "%2d/%d %-78s %s (%.1fs)\n", i, len(selected), m.name, verdict, o.took.Seconds())
		if verbose || res.buildFailed || !res.failed {
			fmt.Fprintf(out, "%s\n", indent(res.output))
		}
	}
	fmt.Fprintf(out, "%d mutations, %d killed, %d survived, %d broken, in %.0fs\n",
		len(selected), len(selected)-len(survived)-len(broken), len(survived), len(broken), time.Since(start).Seconds())
	if len(survived)+len(broken) > 0 {
		return fmt.Errorf("%d mutations survived, %d do not compile: %s", len(survived), len(broken), strings.Join(append(survived, broken...), "; "))
	}
	return nil
}

type outcome struct {
	result
	err  error
	took time.Duration
}

// tryAll tries ms[i] with tryOne(i, ms[i]) on jobs workers, and returns a channel of their
// outcomes in ms's order, each sent once it and every one before it are known. After an error
// no new mutation is started and the channel closes after that error's outcome.
func tryAll(jobs int, ms []mutation, tryOne func(i int, m mutation) (result, error)) <-chan outcome {
	next := make(chan int)
	done := make([]chan outcome, len(ms))
	for i := range done {
		done[i] = make(chan outcome, 1)
	}
	stop := make(chan struct{})
	go func() {
		defer close(next)
		for i := range ms {
			select {
			case next <- i:
			case <-stop:
				return
			}
		}
	}()
	for range jobs {
		go func() {
			for i := range next {
				t0 := time.Now()
				res, err := tryOne(i, ms[i])
				done[i] <- outcome{result: res, err: err, took: time.Since(t0)}
			}
		}()
	}
	out := make(chan outcome)
	go func() {
		defer close(out)
		for i := range ms {
			o := <-done[i]
			out <- o
			if o.err != nil {
				close(stop)
				return
			}
		}
	}()
	return out
}

func selectMutations(all []mutation, run string) ([]mutation, error) {
	if run == "" {
		return all, nil
	}
	re, err := regexp.Compile(run)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	var out []mutation
	for _, m := range all {
		if re.MatchString(m.name) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mutation matches %q", run)
	}
	return out, nil
}

// checkApply fails naming every mutation whose text is not in its file exactly once.
func checkApply(root string, ms []mutation) error {
	var stale []string
	for _, m := range ms {
		b, err := os.ReadFile(filepath.Join(root, m.file))
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte(m.old)); n != 1 {
			stale = append(stale, fmt.Sprintf("%q: %s holds its text %d times, want once", m.name, m.file, n))
		}
	}
	if len(stale) > 0 {
		return errors.New("mutations no longer apply (rewrite them in hack/mutate/mutations.go):\n  " + strings.Join(stale, "\n  "))
	}
	return nil
}

type result struct {
	failed, buildFailed bool
	killers             []string
	output              string
	err                 error
}

// try runs m's tests in the module at root with m's file replaced by its rewrite, written to
// scratch+".go" and named in the overlay scratch+".json".
func try(root, scratch string, m mutation, timeout time.Duration) (result, error) {
	path := filepath.Join(root, m.file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return result{}, err
	}
	if err := os.WriteFile(scratch+".go", bytes.Replace(orig, []byte(m.old), []byte(m.new), 1), 0o644); err != nil {
		return result{}, err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {path: scratch + ".go"}})
	if err != nil {
		return result{}, err
	}
	if err := os.WriteFile(scratch+".json", overlay, 0o644); err != nil {
		return result{}, err
	}
	res := goTest(root, scratch+".json", timeout, []string{m.pkg}, m.run)
	return res, res.err
}

var (
	failRE  = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)
	panicRE = regexp.MustCompile(`(?m)^panic: `)
	buildRE = regexp.MustCompile(`\[(build|setup) failed\]|^# `)
)

// goTest runs the tests named in run of the packages pkgs in dir, with the overlay file given.
func goTest(dir, overlay string, timeout time.Duration, pkgs, run []string) result {
	// -vet=off: make vet has vetted the tree. -ldflags=-s -w: no symbol table or DWARF in the
	// test binaries, which cost most of each link; panics still name their functions.
	args := []string{"test", "-count=1", "-vet=off", "-ldflags=-s -w", "-timeout", timeout.String(), "-run", "^(" + strings.Join(run, "|") + ")$"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, pkgs...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if overlay != "" {
		// The tests that run the go command themselves (hack/layout) see the rewrite too.
		cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -overlay="+overlay))
	}
	b, err := cmd.CombinedOutput()
	res := result{output: string(b)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.failed = true
	default:
		res.err = fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		return res
	}
	if res.failed && buildRE.MatchString(res.output) && !failRE.MatchString(res.output) {
		res.buildFailed = true
	}
	seen := map[string]bool{}
	for _, m := range failRE.FindAllStringSubmatch(res.output, -1) {
		name := strings.SplitN(m[1], "/", 2)[0]
		if !seen[name] {
			seen[name] = true
			res.killers = append(res.killers, name)
		}
	}
	if panicRE.MatchString(res.output) && len(res.killers) == 0 {
		res.killers = append(res.killers, "a panic in "+strings.Join(run, "|"))
	}
	return res
}

func allPackages(ms []mutation) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.pkg] {
			seen[m.pkg] = true
			out = append(out, m.pkg)
		}
	}
	return out
}

func allTests(ms []mutation) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, t := range m.run {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the module: run from the repository")
	}
	return filepath.Dir(gomod), nil
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
