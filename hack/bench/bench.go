package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

const (
	namespace = "bench"
	// Object names are objPrefix and six digits; no other output of any tool contains that.
	objPrefix    = "bench-"
	fieldManager = "kubectl-informer-bench"
)

func objName(i int) string { return fmt.Sprintf("%s%06d", objPrefix, i) }

type bench struct {
	c       config
	cl      *testenv.Cluster
	cs      kubernetes.Interface
	bins    binaries
	apiPID  int
	etcdPID int
	// gcWarned: collectServerGarbage failed once and said so.
	gcWarned bool
	// podNames are the pods of the pods workload, sorted: object i is podNames[i].
	podNames []string
	// dyn is the top workload's client for its custom resources.
	dyn dynamic.Interface
}

// restConfig is the cluster's client configuration without client-side throttling.
func (b *bench) restConfig() *rest.Config {
	cfg := rest.CopyConfig(b.cl.RESTConfig)
	cfg.QPS, cfg.Burst = 100000, 100000
	return cfg
}

func newBench(_ context.Context, c config, cl *testenv.Cluster, bins binaries) (*bench, error) {
	cfg := rest.CopyConfig(cl.RESTConfig)
	cfg.QPS, cfg.Burst = 100000, 100000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := &bench{c: c, cl: cl, cs: cs, bins: bins}
	b.apiPID = cl.ServerPID("kube-apiserver")
	b.etcdPID = cl.ServerPID("etcd")
	if b.apiPID == 0 {
		logf("note: kube-apiserver's process not found; no server CPU figures")
	}
	return b, nil
}

// populate creates the namespace and the objects, c.concurrency at a time.
func (b *bench) populate(ctx context.Context) error {
	for _, ns := range []string{namespace, namespace + "-warm"} {
		if _, err := b.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	switch b.c.workload {
	case workloadPods:
		return b.populatePods(ctx)
	case workloadTop:
		return b.populateTop(ctx)
	}
	logf("creating %d ConfigMaps of %d bytes in namespace %s (%d at a time)", b.c.objects, b.c.size, namespace, b.c.concurrency)
	start := time.Now()
	var done atomic.Int64
	err := parallel(ctx, b.c.objects, b.c.concurrency, func(ctx context.Context, i int) error {
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		payload := make([]byte, b.c.size)
		for j := range payload {
			payload[j] = 'a' + byte(rng.IntN(26))
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: objName(i), Namespace: namespace, Labels: map[string]string{"app": "bench"}},
			Data:       map[string]string{"payload": string(payload), "rev": "0"},
		}
		_, err := b.cs.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("create %s: %w", cm.Name, err)
		}
		if n := done.Add(1); n%5000 == 0 {
			logf("  %d created", n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	el := time.Since(start)
	logf("created %d objects in %s (%.0f/s)", b.c.objects, el.Round(time.Millisecond), float64(b.c.objects)/el.Seconds())
	return nil
}

// warmUp runs each binary once against an empty namespace: page cache, and the discovery
// cache that the plugin and kubectl share (KUBECACHEDIR), so no measured run pays for them.
func (b *bench) warmUp(ctx context.Context) error {
	kc := b.cl.KubeconfigPath
	if b.c.workload == workloadTop {
		return b.warmUpTop(ctx)
	}
	runs := [][]string{{b.bins.plugin, "watch", resArg, "-n", namespace + "-warm", "--timeout", "2s", "--kubeconfig", kc}}
	if b.bins.kubectl != "" {
		runs = append(runs, []string{b.bins.kubectl, "get", resArg, "-n", namespace + "-warm", "--kubeconfig", kc},
			[]string{b.bins.kubectl, "api-resources", "--kubeconfig", kc})
	}
	for _, r := range runs {
		cmd := exec.CommandContext(ctx, r[0], r[1:]...)
		cmd.Env = b.cl.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("warm-up %s: %w\n%s", strings.Join(r, " "), err, out)
		}
	}
	// The minimal informer and the wire tool run until stopped: start and stop them.
	for _, bin := range []string{b.bins.minimal, b.bins.wire} {
		if bin == "" {
			continue
		}
		cmd := exec.CommandContext(ctx, bin, "-kubeconfig", kc, "-n", namespace+"-warm", "-resource", resPlural)
		cmd.Env = b.cl.Environ()
		if err := cmd.Start(); err != nil {
			return err
		}
		time.Sleep(time.Second)
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	return nil
}

// result is one run of one tool.
type result struct {
	Tool     string
	Round    int // 1-based
	Position int // 1-based position in its round

	Sync    time.Duration // process start -> the line of the last object of the initial list
	SyncCPU time.Duration // the tool's user+sys CPU at that moment
	Settle  time.Duration // after the sync until the output was quiet
	Patches time.Duration // first patch sent -> last patch acknowledged
	Updates time.Duration // first patch sent -> the line of the last patched object
	Lag     time.Duration // last patch acknowledged -> that line
	User    time.Duration // rusage at exit
	Sys     time.Duration
	// MaxRSS is the process's peak RSS (KiB): its VmHWM, read from /proc every 20ms until it
	// exits (the kernel's high-water mark of its own memory, exact, monotonic). Not rusage's
	// ru_maxrss: Linux carries a forked child's high-water mark over exec, and os/exec's child
	// starts as the bench's own address space, so ru_maxrss is never below the bench's RSS at
	// the fork (229 MiB while it watches 10,000 pods), whatever the tool uses.
	MaxRSS int64
	// MaxAnon and MaxFile are the largest RssAnon (the process's own memory: heap, stacks) and
	// RssFile (pages of its executable and files mapped in) sampled from /proc every 20ms; KiB.
	MaxAnon  int64
	MaxFile  int64
	Lines    int64  // stdout lines
	Bytes    int64  // stdout bytes
	Stray    int64  // object lines after the sync that were not for a patched object
	Dropped  int    // object lines the tool said it did not show (the plugin's Dropped lines)
	Waits    int    // the plugin's "stdout is not keeping up" notices on stderr
	Informer string // the plugin's summary line about its informer, when it reports trouble
	APICPU   time.Duration
	EtcdCPU  time.Duration
	ExitNote string
	Err      string
	Stderr   string
}

func (r *result) CPU() time.Duration { return r.User + r.Sys }

func (b *bench) runRounds(ctx context.Context) ([]*result, error) {
	var results []*result
	for round := 1; round <= b.c.rounds; round++ {
		order := orderFor(b.c.tools, round-1)
		logf("round %d/%d: %s", round, b.c.rounds, strings.Join(order, ", "))
		for pos, name := range order {
			if ctx.Err() != nil {
				return results, ctx.Err()
			}
			var r *result
			if b.c.workload == workloadTop {
				r = b.runTop(ctx, toolByName(name), round, pos+1)
			} else {
				r = b.runOne(ctx, toolByName(name), round, pos+1)
			}
			results = append(results, r)
			if r.Err != "" {
				logf("  %-12s FAILED: %s", name, r.Err)
				if r.Stderr != "" {
					logf("  stderr tail:\n%s", r.Stderr)
				}
			} else if b.c.workload == workloadTop {
				logf("  %-12s first complete ranking / sync %6.2fs (cpu %5.2fs)  cpu %6.2fs  rss %6.1f MiB  api cpu %5.2fs  lines %d",
					name, r.Sync.Seconds(), r.SyncCPU.Seconds(), r.CPU().Seconds(), float64(r.MaxRSS)/1024, r.APICPU.Seconds(), r.Lines)
			} else {
				logf("  %-12s sync %6.2fs (cpu %5.2fs)  updates %6.2fs (lag %5.2fs)  cpu %6.2fs (user %5.2f sys %5.2f)  rss %6.1f MiB  api cpu %5.2fs  lines %d",
					name, r.Sync.Seconds(), r.SyncCPU.Seconds(), r.Updates.Seconds(), r.Lag.Seconds(), r.CPU().Seconds(),
					r.User.Seconds(), r.Sys.Seconds(), float64(r.MaxRSS)/1024, r.APICPU.Seconds(), r.Lines)
				if b.c.verbose {
					logf("    settle %s, patches %s, stray %d, bytes %d, %s", r.Settle.Round(time.Millisecond), r.Patches.Round(time.Millisecond), r.Stray, r.Bytes, r.ExitNote)
				}
				if b.c.keep && r.Stderr != "" {
					logf("  stderr tail:\n%s", r.Stderr)
				}
			}
			// Let the server finish whatever the stopped watch left behind.
			time.Sleep(time.Second)
		}
	}
	return results, nil
}

// tracker follows one tool's stdout.
type tracker struct {
	objects, updates int
	names            func([]byte, func(int))
	droppedOf        func([]byte) int
	syncedOf         func([]byte) (int, bool)
	pid              int

	mu       sync.Mutex
	seen     []bool // initial sync: objects seen
	nSeen    int
	updSeen  []bool // after armed: patched objects seen
	nUpd     int
	syncAt   time.Time
	syncCPU  time.Duration
	updAt    time.Time
	lastLine time.Time
	lines    int64
	bytes    int64
	stray    int64
	// lines the tool said it dropped, in the initial sync, between, and in the updates
	droppedSync, droppedOther, droppedUpd int
	armed                                 atomic.Bool
	syncedCh                              chan struct{}
	updatedCh                             chan struct{}
	eofCh                                 chan struct{}
	readErr                               error
	idx                                   []int // scratch of the reading goroutine
}

func newTracker(objects, updates int, tl *tool) *tracker {
	names := tl.names
	if names == nil {
		names = firstName
	}
	return &tracker{
		objects: objects, updates: updates, names: names, droppedOf: tl.dropped, syncedOf: tl.synced,
		seen: make([]bool, objects), updSeen: make([]bool, updates),
		syncedCh: make(chan struct{}), updatedCh: make(chan struct{}), eofCh: make(chan struct{}),
	}
}

func (t *tracker) read(r io.Reader) {
	defer close(t.eofCh)
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 {
			t.line(line, time.Now())
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.readErr = err
			}
			return
		}
	}
}

func (t *tracker) line(line []byte, now time.Time) {
	t.idx = t.idx[:0]
	t.names(line, func(i int) { t.idx = append(t.idx, i) })
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines++
	t.bytes += int64(len(line))
	t.lastLine = now
	for _, i := range t.idx {
		t.object(i, now)
	}
	if t.droppedOf != nil && len(t.idx) == 0 {
		if n := t.droppedOf(line); n > 0 {
			t.drop(n, now)
		}
	}
	if t.syncedOf != nil && len(t.idx) == 0 && t.nSeen+t.droppedSync < t.objects {
		// A Synced line with exactly the objects created stands for a line for each; any other
		// count is no sync (the run then fails on its timeout).
		if n, ok := t.syncedOf(line); ok && n == t.objects {
			for i := range t.seen {
				t.seen[i] = true
			}
			t.nSeen = t.objects
			t.synced(now)
		}
	}
}

// drop counts n object lines the tool says it did not show (under mu): they count as seen,
// for the phase the tool is in.
func (t *tracker) drop(n int, now time.Time) {
	if t.nSeen+t.droppedSync < t.objects {
		t.droppedSync += n
		if t.nSeen+t.droppedSync >= t.objects {
			t.synced(now)
		}
		return
	}
	if !t.armed.Load() {
		t.droppedOther += n
		return
	}
	if t.nUpd+t.droppedUpd < t.updates {
		t.droppedUpd += n
		if t.nUpd+t.droppedUpd >= t.updates {
			t.updated(now)
		}
	}
}

func (t *tracker) synced(now time.Time) {
	t.syncAt = now
	t.syncCPU, _ = procCPU(t.pid)
	close(t.syncedCh)
}

func (t *tracker) updated(now time.Time) {
	t.updAt = now
	close(t.updatedCh)
}

// object counts a line for object i (under mu).
func (t *tracker) object(i int, now time.Time) {
	if i >= t.objects {
		return
	}
	if t.nSeen+t.droppedSync < t.objects {
		if !t.seen[i] {
			t.seen[i] = true
			t.nSeen++
			if t.nSeen+t.droppedSync == t.objects {
				t.synced(now)
			}
		}
		return
	}
	if !t.armed.Load() || i >= t.updates || t.updSeen[i] {
		t.stray++
		return
	}
	t.updSeen[i] = true
	t.nUpd++
	if t.nUpd+t.droppedUpd == t.updates {
		t.updated(now)
	}
}

func (t *tracker) quietSince() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastLine
}

// runOne starts tl, waits for its initial sync, patches, waits for the updates, stops it.
// collectServerGarbage makes kube-apiserver collect its garbage before a run: its heap holds
// every object of the workload, and a collection of it costs ~0.5 s of CPU on 10,000 pods.
// Left to itself it fell every few runs (each list it serves allocates) on whichever tool was
// running then, that tool's sync slowed by 0.2-0.3 s and its apiserver CPU up by as much. The
// heap profile's handler collects first (gc=1); the profile itself is thrown away.
func (b *bench) collectServerGarbage(ctx context.Context) {
	if _, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil && !b.gcWarned {
		b.gcWarned = true
		logf("note: kube-apiserver's garbage not collected before the runs: %v", err)
	}
}

func (b *bench) runOne(ctx context.Context, tl *tool, round, pos int, extra ...string) *result {
	res := &result{Tool: tl.name, Round: round, Position: pos}
	path, args := tl.args(b.bins, b.cl.KubeconfigPath)
	args = append(append(args, tl.extra...), extra...)
	cmd := exec.Command(path, args...)
	cmd.Env = append(b.cl.Environ(), tl.env...)
	// Own process group (a Ctrl-C of the bench reaches only the bench, which stops the tool
	// itself); killed if the bench dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.Err = err.Error()
		return res
	}
	stderr := newStderrTail(8 << 10)
	cmd.Stderr = stderr
	tr := newTracker(b.c.objects, b.c.updates, tl)

	b.collectServerGarbage(ctx)
	api0, _ := procCPU(b.apiPID)
	etcd0, _ := procCPU(b.etcdPID)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Err = err.Error()
		return res
	}
	tr.pid = cmd.Process.Pid
	sampled := sampleRSS(cmd.Process.Pid, tr.eofCh)
	var out io.Reader = stdout
	if b.c.dump != "" {
		f, err := os.Create(filepath.Join(b.c.dump, fmt.Sprintf("%d-%s.out", round, tl.name)))
		if err != nil {
			res.Err = err.Error()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return res
		}
		defer f.Close()
		out = io.TeeReader(stdout, f)
	}
	go tr.read(out)

	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-tr.eofCh:
		case <-time.After(30 * time.Second):
			res.ExitNote = "did not stop within 30s of SIGINT: killed"
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-tr.eofCh
		}
		_ = cmd.Wait()
	}
	defer stop()
	fail := func(format string, args ...any) *result {
		res.Err = fmt.Sprintf(format, args...)
		stop()
		res.Stderr = stderr.String()
		return res
	}

	// Phase 1: the initial sync.
	select {
	case <-tr.syncedCh:
	case <-tr.eofCh:
		return fail("exited before the initial sync (%d of %d objects seen)", tr.nSeenLocked(), b.c.objects)
	case <-time.After(b.c.timeout):
		return fail("no initial sync within %s (%d of %d objects seen)", b.c.timeout, tr.nSeenLocked(), b.c.objects)
	case <-ctx.Done():
		return fail("interrupted")
	}
	tr.mu.Lock()
	res.Sync, res.SyncCPU = tr.syncAt.Sub(start), tr.syncCPU
	syncAt := tr.syncAt
	tr.mu.Unlock()

	// Let trailing output (Synced lines, queued Reconciled lines) drain, so that the update
	// phase measures the updates only.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if time.Since(tr.quietSince()) >= b.c.settle {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	res.Settle = time.Since(syncAt)

	// Phase 2: patch c.updates objects, each once, with a value unique to this run.
	value := fmt.Sprintf("%s-round%d", tl.name, round)
	patch := []byte(`{"data":{"rev":"` + value + `"}}`)
	if b.c.workload == workloadPods {
		patch = []byte(`{"metadata":{"annotations":{"rev":"` + value + `"}}}`)
	}
	tr.armed.Store(true)
	p0 := time.Now()
	err = parallel(ctx, b.c.updates, b.c.concurrency, func(ctx context.Context, i int) error {
		if b.c.workload == workloadPods {
			_, err := b.cs.CoreV1().Pods(namespace).Patch(ctx, b.podNames[i], types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
			return err
		}
		_, err := b.cs.CoreV1().ConfigMaps(namespace).Patch(ctx, objName(i), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		return err
	})
	p1 := time.Now()
	res.Patches = p1.Sub(p0)
	if err != nil {
		return fail("patching: %v", err)
	}
	select {
	case <-tr.updatedCh:
	case <-tr.eofCh:
		return fail("exited before all updates were seen (%d of %d)", tr.nUpdLocked(), b.c.updates)
	case <-time.After(b.c.timeout):
		return fail("not all updates seen within %s (%d of %d)", b.c.timeout, tr.nUpdLocked(), b.c.updates)
	case <-ctx.Done():
		return fail("interrupted")
	}
	tr.mu.Lock()
	res.Updates = tr.updAt.Sub(p0)
	res.Lag = tr.updAt.Sub(p1)
	tr.mu.Unlock()

	stop()
	api1, _ := procCPU(b.apiPID)
	etcd1, _ := procCPU(b.etcdPID)
	res.APICPU, res.EtcdCPU = api1-api0, etcd1-etcd0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.User = time.Duration(ru.Utime.Nano())
		res.Sys = time.Duration(ru.Stime.Nano())
	}
	peaks := <-sampled
	res.MaxAnon, res.MaxFile, res.MaxRSS = peaks[0], peaks[1], peaks[2]
	if res.ExitNote == "" {
		res.ExitNote = cmd.ProcessState.String()
	}
	tr.mu.Lock()
	res.Lines, res.Bytes, res.Stray = tr.lines, tr.bytes, tr.stray
	res.Dropped = tr.droppedSync + tr.droppedOther + tr.droppedUpd
	tr.mu.Unlock()
	res.Stderr = stderr.String()
	res.Waits = stderr.waits
	res.Informer = informerTrouble(res.Stderr)
	if tr.readErr != nil {
		res.Err = "reading stdout: " + tr.readErr.Error()
	}
	return res
}

func (t *tracker) nSeenLocked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nSeen
}

func (t *tracker) nUpdLocked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nUpd
}

// parallel runs fn(0..n-1) on workers goroutines; the first error cancels the rest.
func parallel(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// procCPU is a process's user+sys CPU so far, from /proc/PID/stat (0 and an error if pid is 0
// or gone).
// sampleRSS samples pid's RssAnon, RssFile and VmHWM (/proc/PID/status) every 20ms until done
// is closed, and then sends their peaks (KiB).
func sampleRSS(pid int, done <-chan struct{}) <-chan [3]int64 {
	out := make(chan [3]int64, 1)
	go func() {
		var peaks [3]int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if m, ok := procRSS(pid); ok {
				for i := range peaks {
					peaks[i] = max(peaks[i], m[i])
				}
			}
			select {
			case <-done:
				out <- peaks
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// procRSS reads RssAnon, RssFile and VmHWM (KiB) from /proc/PID/status.
func procRSS(pid int) (m [3]int64, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return m, false
	}
	fields := map[string]int{"RssAnon": 0, "RssFile": 1, "VmHWM": 2}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, found := strings.Cut(line, ":")
		i, known := fields[k]
		if !found || !known {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return m, false
		}
		m[i] = n
	}
	return m, m[0] > 0 && m[2] > 0
}

func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, errors.New("no pid")
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat")
	}
	const clkTck = 100 // USER_HZ, 100 on every Linux platform Go supports
	return time.Duration(ut+st) * time.Second / clkTck, nil
}

// informerTrouble is the plugin's exit summary line about its informer ("informer: 0 lists,
// 0 relists, 0 watch restarts, ...") if it counts relists, restarts, closes or errors.
func informerTrouble(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "informer: ") {
			continue
		}
		for _, f := range strings.Split(strings.TrimPrefix(l, "informer: "), ", ") {
			n, what, _ := strings.Cut(f, " ")
			if n != "0" && (strings.Contains(what, "relist") || strings.Contains(what, "watch") || strings.Contains(what, "error")) {
				return l
			}
		}
	}
	return ""
}

// waitNotice is what the plugin says on stderr when -o json makes the informers wait for stdout.
var waitNotice = []byte("stdout is not keeping up")

// tail keeps the last bytes of a tool's stderr, and counts the plugin's wait notices.
type tail struct {
	*testenv.TailBuffer
	mu    sync.Mutex
	waits int
}

func newStderrTail(max int) *tail { return &tail{TailBuffer: testenv.NewTailBuffer(max)} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.waits += bytes.Count(p, waitNotice)
	t.mu.Unlock()
	return t.TailBuffer.Write(p)
}

func (t *tail) String() string { return strings.TrimRight(t.TailBuffer.String(), "\n") }
