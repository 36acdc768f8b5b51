package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// topHold is how long a tool of the top workload runs on after its first complete ranking
// (the floor: after its last Synced line), so that its peak RSS covers it at work, not only
// its start.
const topHold = 3 * time.Second

// Progress kinds of the top workload's tools: what stdout line says a tool has every object.
const (
	// progressRanking: top's TopResource lines. Top writes a ranking every --interval; a
	// resource is in it once written in the window, with `objects`, how many objects of it
	// top's informers hold. The first complete ranking is the first whose TopResource lines
	// say, for every one of the workload's resources, exactly the objects the bench created.
	progressRanking = "ranking"
	// progressSynced: watch's Synced lines (and metafloor's, of the same shape), one per resource when its initial list was
	// delivered, with `items`; complete when every resource's Synced line came with exactly
	// the objects the bench created.
	progressSynced = "synced"
)

// topTools are the top workload's tools (optional: the other workloads never run them).
var topTools = []*tool{
	{
		name:     "top",
		label:    "kubectl-informer top -o json --interval 1s --window 10m (every resource discovery lists, all namespaces)",
		optional: true,
		progress: progressRanking,
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"top", "-o", "json", "--interval", "1s", "--window", "10m", "--kubeconfig", kc}
		},
	},
	{
		name:     "top-named",
		label:    "kubectl-informer top RESOURCES -o json --interval 1s --window 10m (the workload's 20 resources only)",
		optional: true,
		progress: progressRanking,
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"top", topResourceArg(), "-o", "json", "--interval", "1s", "--window", "10m", "--kubeconfig", kc}
		},
	},
	{
		name:     "floor",
		label:    "kubectl-informer watch RESOURCES -A --metadata-only -o json (the workload's 20 resources)",
		optional: true,
		progress: progressSynced,
		args: func(b binaries, kc string) (string, []string) {
			return b.plugin, []string{"watch", topResourceArg(), "-A", "--metadata-only", "-o", "json", "--kubeconfig", kc}
		},
	},
	{
		// The informers alone: what top and the floor both stand on.
		name:     "informers",
		label:    "hack/bench/metafloor -resources RESOURCES (client-go metadata-only informers over protobuf, all namespaces, handlers that only count; one Synced line per resource)",
		optional: true,
		progress: progressSynced,
		args: func(b binaries, kc string) (string, []string) {
			return b.metafloor, []string{"-kubeconfig", kc, "-resources", topResourceArg()}
		},
	},
}

func init() { tools = append(tools, topTools...) }

// topToolNames are the tools -workload top runs by default.
func topToolNames() []string { return []string{"top", "top-named", "floor", "informers"} }

// topProgress follows one tool's stdout to its first complete ranking (or sync).
type topProgress struct {
	kind string
	want map[string]int // resource (plural.group) -> objects it holds
	have map[string]int
	// over names a resource reported with more objects than it holds (a count top or watch
	// got wrong), once.
	over []string
}

func newTopProgress(kind string, want map[string]int) *topProgress {
	return &topProgress{kind: kind, want: want, have: map[string]int{}}
}

var (
	topResourceType = []byte(`"type":"TopResource"`)
	syncedType      = []byte(`"type":"Synced"`)
)

// line reads one stdout line and reports whether every resource now has all its objects.
func (p *topProgress) line(line []byte) bool {
	var res string
	var n int
	switch {
	case p.kind == progressRanking && bytes.Contains(line, topResourceType):
		var rec struct {
			Resource string `json:"resource"`
			Objects  int    `json:"objects"`
		}
		if json.Unmarshal(line, &rec) != nil {
			return false
		}
		res, n = rec.Resource, rec.Objects
	case p.kind == progressSynced:
		var ok bool
		if res, n, ok = syncedLine(line); !ok {
			return false
		}
	default:
		return false
	}
	want, ok := p.want[res]
	if !ok {
		return false // another resource (top follows every one)
	}
	if n > want && p.have[res] <= want {
		p.over = append(p.over, res)
	}
	p.have[res] = n
	return p.complete()
}

func (p *topProgress) complete() bool {
	for res, want := range p.want {
		if p.have[res] != want {
			return false
		}
	}
	return true
}

// missing is how many resources are not complete yet.
func (p *topProgress) missing() int {
	n := 0
	for res, want := range p.want {
		if p.have[res] != want {
			n++
		}
	}
	return n
}

// warmUpTop runs the plugin once against the empty warm-up namespace (page cache, discovery).
func (b *bench) warmUpTop(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, b.bins.plugin, "watch", topResourceArg(), "-n", namespace+"-warm", "--timeout", "2s", "--kubeconfig", b.cl.KubeconfigPath)
	cmd.Env = b.cl.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.New("warm-up: " + err.Error() + "\n" + string(out))
	}
	return nil
}

// runTop starts tl, waits for its first complete ranking (or sync), lets it run topHold
// longer, and stops it: Sync is the time to that line, SyncCPU the tool's CPU then.
func (b *bench) runTop(ctx context.Context, tl *tool, round, pos int) *result {
	res := &result{Tool: tl.name, Round: round, Position: pos}
	path, args := tl.args(b.bins, b.cl.KubeconfigPath)
	cmd := exec.Command(path, append(args, tl.extra...)...)
	cmd.Env = append(b.cl.Environ(), tl.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.Err = err.Error()
		return res
	}
	stderr := newStderrTail(8 << 10)
	cmd.Stderr = stderr
	prog := newTopProgress(tl.progress, topWant(b.c.objects))
	done, eof := make(chan struct{}), make(chan struct{})
	var lines, nbytes int64
	var doneAt time.Time
	var doneCPU time.Duration

	api0, _ := procCPU(b.apiPID)
	etcd0, _ := procCPU(b.etcdPID)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Err = err.Error()
		return res
	}
	sampled := sampleRSS(cmd.Process.Pid, eof)
	go func() {
		defer close(eof)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lines++
				nbytes += int64(len(line))
			}
			if doneAt.IsZero() && prog.line(line) {
				doneAt = time.Now()
				doneCPU, _ = procCPU(cmd.Process.Pid)
				close(done)
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					res.Err = "reading stdout: " + err.Error()
				}
				return
			}
		}
	}()

	var fail string
	select {
	case <-done:
		time.Sleep(topHold)
	case <-eof:
		fail = "exited before its first complete ranking"
	case <-time.After(b.c.timeout):
		fail = "no complete ranking within " + b.c.timeout.String()
	case <-ctx.Done():
		fail = "interrupted"
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		res.ExitNote = "did not stop within 30s of SIGINT: killed"
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-eof
	}
	_ = cmd.Wait()
	res.Stderr = stderr.String()
	peaks := <-sampled
	if fail != "" {
		res.Err = fail + ": " + strconv.Itoa(prog.missing()) + " of " + strconv.Itoa(topResources) + " resources short of their objects"
		return res
	}
	res.Sync, res.SyncCPU = doneAt.Sub(start), doneCPU
	api1, _ := procCPU(b.apiPID)
	etcd1, _ := procCPU(b.etcdPID)
	res.APICPU, res.EtcdCPU = api1-api0, etcd1-etcd0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.User = time.Duration(ru.Utime.Nano())
		res.Sys = time.Duration(ru.Stime.Nano())
	}
	res.MaxAnon, res.MaxFile, res.MaxRSS = peaks[0], peaks[1], peaks[2]
	res.Lines, res.Bytes = lines, nbytes
	if res.ExitNote == "" {
		res.ExitNote = cmd.ProcessState.String()
	}
	if len(prog.over) > 0 {
		res.Informer = "more objects than created in: " + strings.Join(prog.over, ", ")
	}
	res.Waits = stderr.waits
	return res
}
