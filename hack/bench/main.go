// Command bench measures kubectl-informer against kubectl, a minimal informer and the wire
// limit (hack/bench/wire: the streaming list copied, not decoded) on a local
// kube-apiserver (test/testenv: etcd + kube-apiserver on 127.0.0.1): time to the initial sync,
// time to see a burst of updates, CPU and peak RSS. `make bench` runs it with -write, which
// puts the results into docs/bench-results.md.
//
//	go run ./hack/bench                                          # the default: 20000 objects, 3 rounds
//	go run ./hack/bench -objects 2000 -updates 200 -rounds 1     # a quick run
//	go run ./hack/bench -tools plugin,minimal                    # a subset
//	go run ./hack/bench -workload top -objects 100000            # kubectl informer top vs a --metadata-only watch (make bench-top)
//
// It creates -objects ConfigMaps of -size bytes of data in one namespace, then, for -rounds
// rounds, runs each tool in turn (the order rotates every round, so no tool always runs first
// or last on a noisy machine): it starts the tool with its stdout on a pipe, waits until the
// tool printed a line for every object (the initial sync), lets the output settle, patches
// -updates objects (each once, with a value unique to the run), waits until a line for every
// patched object came out, and stops the tool with SIGINT. CPU (user+sys) and peak RSS come
// from the tool's rusage at exit.
//
// -workload top (topload.go, toprun.go) creates -objects custom resources over 20 CRDs and
// measures the time to `kubectl informer top`'s first complete ranking and its peak RSS against
// a --metadata-only watch of the same resources.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

type config struct {
	objects     int
	size        int
	updates     int
	rounds      int
	tools       []string
	concurrency int
	settle      time.Duration
	timeout     time.Duration
	write       bool
	out         string
	plugin      string
	before      string
	kubectl     string
	keep        bool
	dump        string
	compare     [][2]string
	profile     string
	profileRuns int
	toolsGiven  bool
	verbose     bool
	workload    string
}

func main() {
	var c config
	var tools string
	flag.IntVar(&c.objects, "objects", 20000, "ConfigMaps to create in the namespace")
	flag.IntVar(&c.size, "size", 1024, "bytes of data in each ConfigMap")
	flag.IntVar(&c.updates, "updates", 2000, "objects patched (each once) per run, after the initial sync; at most -objects")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; every round runs every tool once, in a rotated order")
	flag.StringVar(&tools, "tools", strings.Join(toolNames(), ","), "tools to run, comma-separated; BASE+KEY=VALUE[+KEY=VALUE] runs a tool with extra environment variables (plugin+GOGC=50), BASE+-FLAG with an extra argument (plugin+--disable-compression)")
	flag.IntVar(&c.concurrency, "concurrency", 32, "concurrent creates and patches")
	flag.DurationVar(&c.settle, "settle", 500*time.Millisecond, "after the initial sync, wait until a tool printed nothing for this long (at most 30s) before patching")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "give up on a phase (initial sync, updates) of one run after this long")
	flag.BoolVar(&c.write, "write", false, "write the results into docs/bench-results.md (between its bench markers)")
	flag.StringVar(&c.out, "out", "", "file for -write (default: docs/bench-results.md in the module root)")
	flag.StringVar(&c.plugin, "plugin", "", "kubectl-informer binary (default: build ./cmd/kubectl-informer with -trimpath)")
	flag.StringVar(&c.before, "before", "", "a second kubectl-informer binary (an earlier build) measured beside the plugin in the same rounds: a tool named before-TOOL runs plugin tool TOOL with it (before-plugin+--diff)")
	flag.StringVar(&c.kubectl, "kubectl", "", "kubectl binary (default: kubectl on PATH; a gcloud dispatcher is resolved to the newest kubectl.1.N beside it)")
	flag.BoolVar(&c.keep, "keep", false, "keep the tools' stderr tails in the output even when they succeed")
	flag.StringVar(&c.dump, "dump", "", "also write each run's stdout to DIR/ROUND-TOOL.out (for debugging a tool's matching)")
	flag.StringVar(&c.profile, "profile", "", "after the rounds, run each plugin tool and the minimal informer once more with CPU and heap profiles into DIR (with go tool pprof -top summaries)")
	flag.IntVar(&c.profileRuns, "profile-runs", 1, "with -profile, profile each tool this many times; the summaries read every run's CPU profile together (a 10,000-pod sync is ~50 samples)")
	compare := flag.String("compare", "", "extra ratio rows, comma-separated A/B pairs of tool names")
	flag.BoolVar(&c.verbose, "v", false, "log every run as it happens in more detail")
	flag.StringVar(&c.workload, "workload", workloadConfigMaps, "configmaps (-objects ConfigMaps of -size bytes, on etcd and kube-apiserver) pods (-objects pods made by kube-controller-manager from a Deployment per kwok node, pinned to it, and run by kwok: e.g. -objects 10000, or 50000), or top (-objects custom resources over 20 CRDs: kubectl informer top's first complete ranking against a --metadata-only watch, the floor)")
	flag.Parse()
	c.tools = splitList(tools)
	flag.Visit(func(f *flag.Flag) { c.toolsGiven = c.toolsGiven || f.Name == "tools" })
	for _, p := range splitList(*compare) {
		a, b, _ := strings.Cut(p, "/")
		c.compare = append(c.compare, [2]string{a, b})
	}
	if c.workload == workloadTop && !c.toolsGiven {
		c.tools = topToolNames()
	} else if !c.toolsGiven {
		// The plugin's data paths side by side: protobuf (default), with --diff (the memory
		// targets' configuration), JSON forced. The wire and --diff also as client-go's default
		// and kubectl's --disable-compression ask for the stream: gzipped and not, each beside the
		// other that receives the same bytes.
		c.tools = append(c.tools, "wire+-gzip", "plugin+--diff", "plugin+--diff+--disable-compression", "plugin+--wire=json", "plugin+--otlp")
		if len(c.compare) == 0 {
			c.compare = [][2]string{{"plugin+--diff", "wire+-gzip"}, {"plugin+--diff+--disable-compression", "wire"}}
		}
	}
	if c.workload == workloadPods {
		resArg, resPlural = "pods", "pods"
		relabelForPods()
	}
	if err := validate(&c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// otlpTools says whether a tool exports over OTLP (--otlp).
func otlpTools(tools []string) bool {
	for _, t := range tools {
		if strings.Contains(t, "+--otlp") {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func validate(c *config) error {
	switch {
	case c.objects < 1 || c.objects > 999999:
		return fmt.Errorf("-objects must be between 1 and 999999, got %d", c.objects)
	case c.workload == workloadTop && c.profile != "":
		return errors.New("-profile does not run with -workload top (kubectl informer top has no --cpuprofile)")
	case c.workload == workloadTop && c.objects < topResources:
		return fmt.Errorf("-objects must be at least %d with -workload top (one object per resource at least), got %d", topResources, c.objects)
	case c.workload != workloadTop && (c.updates < 1 || c.updates > c.objects):
		return fmt.Errorf("-updates must be between 1 and -objects (%d), got %d", c.objects, c.updates)
	case c.rounds < 1:
		return fmt.Errorf("-rounds must be >= 1, got %d", c.rounds)
	case c.size < 0:
		return fmt.Errorf("-size must be >= 0, got %d", c.size)
	case c.concurrency < 1:
		return fmt.Errorf("-concurrency must be >= 1, got %d", c.concurrency)
	case c.workload != workloadConfigMaps && c.workload != workloadPods && c.workload != workloadTop:
		return fmt.Errorf("-workload must be one of %s, %s, %s; got %q", workloadConfigMaps, workloadPods, workloadTop, c.workload)
	case len(c.tools) == 0:
		return errors.New("-tools is empty")
	}
	for _, t := range c.tools {
		if toolByName(t) == nil {
			var all []string
			for _, tl := range tools {
				all = append(all, tl.name)
			}
			return fmt.Errorf("unknown tool %q; known: %s (and BASE+KEY=VALUE variants, before-PLUGINTOOL with -before)", t, strings.Join(all, ", "))
		}
		if strings.HasPrefix(t, beforePrefix) && c.before == "" {
			return fmt.Errorf("tool %q runs the -before binary: give -before BIN", t)
		}
		if top := toolByName(t).progress != ""; top != (c.workload == workloadTop) {
			return fmt.Errorf("tool %q does not run with -workload %s (the top workload runs %s; the others every other tool)", t, c.workload, strings.Join(topToolNames(), ", "))
		}
	}
	return nil
}

func run(c config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	if c.out == "" {
		c.out = filepath.Join(root, "docs", "bench-results.md")
	}
	work, err := os.MkdirTemp("", "kubectl-informer-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	logf("building the plugin and the minimal informer")
	bins, err := buildTools(ctx, root, work, &c)
	if err != nil {
		return err
	}

	logf("starting etcd and kube-apiserver")
	started := time.Now()
	opts := testenv.Options{APIServerFlags: map[string]string{
		"max-requests-inflight":          "2000",
		"max-mutating-requests-inflight": "1000",
	}}
	if c.workload == workloadPods {
		// No kube-scheduler: the pods are pinned to their nodes (populatePods says why).
		logf("with kube-controller-manager and kwok")
		opts.Controllers, opts.Nodes = true, 1
		// Its client's default limit (20 requests a second) made creating the pods the bench's
		// longest step (50,000 pods: ~40 min at the ReplicaSet controller's 20 creates a
		// second); lifted as kwokctl lifts it (kwok's own client is not limited).
		opts.ControllerManagerArgs = []string{"--kube-api-qps=5000", "--kube-api-burst=5000"}
	}
	cl, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping the cluster")
		if err := cl.Stop(); err != nil {
			logf("stop: %v", err)
		}
	}()
	logf("control plane up in %s", time.Since(started).Round(time.Millisecond))

	if otlpTools(c.tools) && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		// plugin+--otlp exports to a local Jaeger (hack/testcluster/build-jaeger.sh), as a team's
		// collector would take the spans.
		j, err := testenv.RunJaeger(ctx)
		if err != nil {
			return err
		}
		defer j.Stop()
		if err := os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLPHTTP); err != nil {
			return err
		}
		logf("jaeger up, OTLP at %s", j.OTLPHTTP)
	}
	b, err := newBench(ctx, c, cl, bins)
	if err != nil {
		return err
	}
	machine := describeMachine(ctx, bins)
	machine.LoadBefore = loadAvg()
	if err := b.populate(ctx); err != nil {
		return err
	}
	if err := b.warmUp(ctx); err != nil {
		return err
	}
	if c.workload == workloadTop {
		wctx, stopWriter := context.WithCancel(ctx)
		writerDone := make(chan struct{})
		go func() { defer close(writerDone); b.writeTop(wctx) }()
		defer func() { stopWriter(); <-writerDone }()
	}
	results, err := b.runRounds(ctx)
	machine.LoadAfter = loadAvg()
	if err == nil && c.profile != "" {
		err = b.profileRuns(ctx, c.profile)
	}
	if err != nil && len(results) == 0 {
		return err
	}
	rep := newReport(c, machine, results, os.Args[1:])
	fmt.Println()
	fmt.Print(rep.markdown())
	if c.write {
		if werr := writeReport(c.out, c.workload, rep.markdown()); werr != nil {
			return errors.Join(err, werr)
		}
		logf("wrote %s", c.out)
	}
	return err
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
