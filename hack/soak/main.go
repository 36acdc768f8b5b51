// Command soak is a flake hunt: it runs the end-to-end suite -n times, one of the runs beside a
// neighbour process that burns every core (as the shared machines CI runs on are), and prints
// each test's pass rate as a markdown table (docs/reliability.md holds the last one). It exits
// non-zero when a test failed in any run. `make e2e-soak` runs it:
//
//	make e2e-soak                                            # the whole suite, 5 runs
//	make e2e-soak SOAK_N=2 SOAK_RUN='^(TestRelist|TestSIGTERM)$'  # a subset, 2 runs
//
// Each run is `go test -json -count=1 -p 1 -parallel P -run RUN PKG`; its JSON is kept in -dir (one
// run-N.json a run) so a failure can be read in full afterwards. The neighbour is this program
// again with -burn, started before its run and stopped by its pid after it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	runs    int
	run     string
	pkg     string
	timeout time.Duration
	par     int // go test -parallel
	burnRun int // the run (1-based) beside the neighbour; 0: none
	dir     string
	goCmd   string
}

func main() {
	burn := flag.Bool("burn", false, "be the CPU-burning neighbour: spin on every core until killed")
	var cfg config
	flag.IntVar(&cfg.runs, "n", envInt("SOAK_N", 5), "how many runs of the suite (SOAK_N)")
	flag.StringVar(&cfg.run, "run", envOr("SOAK_RUN", "."), "go test -run regex selecting the tests (SOAK_RUN)")
	flag.StringVar(&cfg.pkg, "pkg", "./test/e2e/", "the package to soak")
	flag.IntVar(&cfg.par, "parallel", 4, "go test -parallel: how many of the tests marked t.Parallel run at once")
	flag.DurationVar(&cfg.timeout, "timeout", 40*time.Minute, "go test -timeout of each run")
	flag.IntVar(&cfg.burnRun, "burn-run", -1, "the run beside the CPU-burning neighbour (1-based; 0: none; default: the last)")
	flag.StringVar(&cfg.dir, "dir", "", "where each run's go test -json output is kept (default: a new temporary directory)")
	flag.Parse()
	if *burn {
		burnCPU()
		return
	}
	if cfg.burnRun < 0 {
		cfg.burnRun = cfg.runs
	}
	cfg.goCmd = envOr("GO", "go")
	if err := soak(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func soak(cfg config) error {
	if cfg.runs < 1 {
		return fmt.Errorf("-n must be >= 1, got %d", cfg.runs)
	}
	if cfg.dir == "" {
		d, err := os.MkdirTemp("", "kubectl-informer-soak-")
		if err != nil {
			return err
		}
		cfg.dir = d
	} else if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tally := newTally()
	for i := 1; i <= cfg.runs; i++ {
		withNeighbour := i == cfg.burnRun
		fmt.Fprintf(os.Stderr, "soak: run %d of %d%s: go test -run %q %s\n", i, cfg.runs, neighbourNote(withNeighbour), cfg.run, cfg.pkg)
		start := time.Now()
		res, err := oneRun(ctx, cfg, i, withNeighbour)
		if err != nil {
			return err
		}
		tally.add(i, withNeighbour, res)
		fmt.Fprintf(os.Stderr, "soak: run %d: %d passed, %d failed, %d skipped in %s (%s)\n",
			i, res.count(pass), res.count(fail), res.count(skip), time.Since(start).Round(time.Second), res.file)
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted after run %d", i)
		}
	}
	fmt.Print(tally.table(cfg))
	if bad := tally.flaky(); len(bad) > 0 {
		for _, f := range bad {
			fmt.Fprintf(os.Stderr, "\n--- %s failed in run %d; its output (%s):\n%s", f.test, f.run, f.file, f.output)
		}
		return fmt.Errorf("%d test runs failed", len(bad))
	}
	return nil
}

func neighbourNote(on bool) string {
	if on {
		return fmt.Sprintf(", beside a neighbour burning %d cores", runtime.NumCPU())
	}
	return ""
}

// oneRun runs the suite once, beside the neighbour if asked, and parses its go test -json.
func oneRun(ctx context.Context, cfg config, i int, withNeighbour bool) (*runResult, error) {
	file := filepath.Join(cfg.dir, fmt.Sprintf("run-%d.json", i))
	out, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if withNeighbour {
		pid, err := startNeighbour()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "soak: neighbour pid %d\n", pid)
		defer stopNeighbour(pid)
	}
	cmd := exec.CommandContext(ctx, cfg.goCmd, "test", "-json", "-count=1", "-p", "1", "-parallel", strconv.Itoa(cfg.par),
		"-timeout", cfg.timeout.String(), "-run", cfg.run, cfg.pkg)
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	// A failing test makes go test exit 1: that is a result, read from the JSON, not an error.
	runErr := cmd.Run()
	if _, ok := runErr.(*exec.ExitError); runErr != nil && !ok {
		return nil, fmt.Errorf("go test: %w", runErr)
	}
	if _, err := out.Seek(0, 0); err != nil {
		return nil, err
	}
	res, err := parseRun(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	res.file = file
	if len(res.tests) == 0 && runErr != nil {
		return nil, fmt.Errorf("go test failed before any test ran (see %s)", file)
	}
	return res, nil
}

// startNeighbour starts this program with -burn in its own process group and returns its pid.
func startNeighbour() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, "-burn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start the CPU neighbour: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaped when stopped
	return cmd.Process.Pid, nil
}

// stopNeighbour kills the neighbour's process group, by the pid startNeighbour returned.
func stopNeighbour(pid int) {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		fmt.Fprintf(os.Stderr, "soak: stop the neighbour %d: %v\n", pid, err)
		return
	}
	fmt.Fprintf(os.Stderr, "soak: neighbour %d stopped\n", pid)
}

// burnCPU spins on every core until the process is killed.
func burnCPU() {
	for range runtime.NumCPU() - 1 {
		go spin()
	}
	spin()
}

// sink keeps the spinning loop's work observable, so that no tool or compiler takes it for dead.
var sink atomic.Uint64

func spin() {
	var x uint64
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			sink.Store(x)
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
