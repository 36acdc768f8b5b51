package podlogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func ts(sec, nsec int) time.Time { return time.Date(2025, 11, 25, 1, 2, sec, nsec, time.UTC) }

func stamped(t time.Time, line string) string { return t.Format(time.RFC3339Nano) + " " + line + "\n" }

// A reopened stream, asked for the lines since the last one's second, sends some again: none is
// passed on twice, lines of the same nanosecond included, and a new one is.
func TestResume(t *testing.T) {
	var r resume
	var got []string
	feed := func(s string) {
		if err := readLines(strings.NewReader(s), func(b []byte) {
			if rest, ok := r.keep(b); ok {
				got = append(got, string(rest))
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if since := r.reopen(); since != nil {
		t.Fatalf("first stream since %v, want from the start", since)
	}
	feed(stamped(ts(1, 100), "a") + stamped(ts(1, 200), "b") + stamped(ts(1, 200), "c"))
	since := r.reopen()
	if since == nil || !since.Time.Equal(ts(1, 200)) {
		t.Fatalf("reopened since %v, want the last line's time", since)
	}
	// The API server takes SinceTime in seconds: the stream starts at the second's first line.
	feed(stamped(ts(1, 100), "a") + stamped(ts(1, 200), "b") + stamped(ts(1, 200), "c") + stamped(ts(1, 200), "d") + stamped(ts(2, 0), "e"))
	r.reopen()
	feed(stamped(ts(2, 0), "e") + "no timestamp\n" + stamped(ts(3, 0), "f"))
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e", "no timestamp", "f"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	var got []string
	err := readLines(strings.NewReader("one\r\n"+long+"\n\ntwo\nbroken in its mid"), func(b []byte) { got = append(got, string(b)) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one", long[:maxLine], "", "two"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d (the partial last one dropped)", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
}

func pod(name string, phase corev1.PodPhase, containers ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID("uid-" + name)}, Status: corev1.PodStatus{Phase: phase}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	return p
}

func TestContainers(t *testing.T) {
	withDefault := pod("a", corev1.PodRunning, "proxy", "manager")
	withDefault.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "manager"}
	staleDefault := pod("b", corev1.PodRunning, "proxy", "manager")
	staleDefault.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "gone"}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
		out  []string
	}{
		{"every container", pod("a", corev1.PodRunning, "proxy", "manager"), "", []string{"proxy", "manager"}},
		{"the default container", withDefault, "", []string{"manager"}},
		{"a default that is not there", staleDefault, "", []string{"proxy", "manager"}},
		{"-c", withDefault, "proxy", []string{"proxy"}},
		{"-c of a container it lacks", withDefault, "sidecar", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.out, Containers(tt.pod, tt.want)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStarted(t *testing.T) {
	running := pod("a", corev1.PodRunning, "m")
	waiting := pod("a", corev1.PodRunning, "m")
	waiting.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "m", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	restarting := waiting.DeepCopy()
	restarting.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"pending, no status", pod("a", corev1.PodPending, "m"), false},
		{"running, no status", running, true},
		{"waiting to start", waiting, false},
		{"waiting after a crash: its last log", restarting, true},
	}
	for _, tt := range tests {
		if got := Started(tt.pod, "m"); got != tt.want {
			t.Errorf("%s: Started = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// fakeLogs serves canned pod log streams: each open of a container's log takes the next of its
// answers; past them a stream stays open, with nothing, until its context ends.
type fakeLogs struct {
	mu      sync.Mutex
	answers map[string][]any // pod/container -> string bodies or errors
	opens   map[string][]*metav1.Time
	closed  map[string]bool
}

func (f *fakeLogs) open(ctx context.Context, _, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := pod + "/" + opts.Container
	f.opens[key] = append(f.opens[key], opts.SinceTime)
	if !opts.Follow || !opts.Timestamps {
		return nil, fmt.Errorf("opened without follow and timestamps: %+v", opts)
	}
	if as := f.answers[key]; len(as) > 0 {
		f.answers[key] = as[1:]
		if err, ok := as[0].(error); ok {
			return nil, err
		}
		return io.NopCloser(strings.NewReader(as[0].(string))), nil
	}
	pr, pw := io.Pipe()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		f.closed[key] = true
		f.mu.Unlock()
		pw.Close()
	}()
	return pr, nil
}

func (f *fakeLogs) opened(key string) []*metav1.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*metav1.Time(nil), f.opens[key]...)
}

// sink collects what a Follower hands on.
type sink struct {
	mu     sync.Mutex
	lines  map[string][]string
	events []watch.Event
}

func (s *sink) Sink() ctrllog.Sink {
	return ctrllog.Sink{
		Open: func(source string) func([]byte, time.Time) {
			return func(b []byte, _ time.Time) {
				s.mu.Lock()
				s.lines[source] = append(s.lines[source], string(b))
				s.mu.Unlock()
			}
		},
		Event: func(ev watch.Event) {
			s.mu.Lock()
			s.events = append(s.events, ev)
			s.mu.Unlock()
		},
		Notice: func(string) {},
	}
}

func (s *sink) of(source string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines[source]...)
}

func (s *sink) errors() []watch.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []watch.Event
	for _, ev := range s.events {
		if ev.Type == watch.Error {
			out = append(out, ev)
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func startFollower(t *testing.T, logs *fakeLogs, container string) (*fcache.FakeControllerSource, *sink) {
	t.Helper()
	src := fcache.NewFakeControllerSource()
	s := &sink{lines: map[string][]string{}}
	f := &Follower{Workload: Workload{Namespace: "demo", Name: "deployment.apps/mgr"}, Container: container, Flag: "demo/deploy/mgr",
		stream: logs.open, lw: src, minBackoff: time.Millisecond, maxBackoff: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		f.Run(ctx, s.Sink())
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return src, s
}

// A rollout: the old pod's default container is read, its broken stream reopened where it
// broke with no line twice; the new pod is read once it runs; the old pod's stream ends with
// its deletion.
func TestFollowerRollout(t *testing.T) {
	logs := &fakeLogs{opens: map[string][]*metav1.Time{}, closed: map[string]bool{}, answers: map[string][]any{
		"old/manager": {
			stamped(ts(1, 1), "a1") + stamped(ts(1, 2), "a2"),
			stamped(ts(1, 1), "a1") + stamped(ts(1, 2), "a2") + stamped(ts(2, 0), "a3"),
		},
		"new/manager": {stamped(ts(5, 0), "b1")},
	}}
	old := pod("old", corev1.PodRunning, "proxy", "manager")
	old.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "manager"}
	src, s := startFollower(t, logs, "")
	src.Add(old)
	oldSrc, newSrc := Source("demo", "old", "manager"), Source("demo", "new", "manager")
	eventually(t, "the old pod's three lines", func() bool { return len(s.of(oldSrc)) >= 3 })
	newPod := pod("new", corev1.PodPending, "proxy", "manager")
	newPod.Annotations = old.Annotations
	src.Add(newPod)
	time.Sleep(50 * time.Millisecond)
	if n := len(logs.opened("new/manager")); n != 0 {
		t.Fatalf("a pending pod's log opened %d times", n)
	}
	running := newPod.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	src.Modify(running)
	eventually(t, "the new pod's line", func() bool { return len(s.of(newSrc)) == 1 })
	src.Delete(old)
	eventually(t, "the old pod's stream closed", func() bool {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		return logs.closed["old/manager"]
	})
	if diff := cmp.Diff([]string{"a1", "a2", "a3"}, s.of(oldSrc)); diff != "" {
		t.Errorf("old pod's lines (-want +got):\n%s", diff)
	}
	opens := logs.opened("old/manager")
	if len(opens) < 2 || opens[0] != nil || opens[1] == nil || !opens[1].Time.Equal(ts(1, 2)) {
		t.Errorf("old pod's log opened since %v, want from the start, then since its last line's time", opens)
	}
	if n := len(logs.opened("old/proxy")); n != 0 {
		t.Errorf("the proxy container read %d times; the default container is manager", n)
	}
	if errs := s.errors(); len(errs) != 0 {
		t.Errorf("Error lines of a clean rollout: %v", errs)
	}
}

// A 403 on pods/log is one Error line for all the workload's pods, naming the permission and
// the user to grant it to; the streams go on retrying and say nothing more.
func TestFollowerForbidden(t *testing.T) {
	forbidden := func(pod string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, pod, fmt.Errorf(`User "bob" cannot get resource "pods/log" in API group "" in the namespace "demo"`))
	}
	logs := &fakeLogs{opens: map[string][]*metav1.Time{}, closed: map[string]bool{}, answers: map[string][]any{
		"a/m": {forbidden("a"), forbidden("a"), forbidden("a"), forbidden("a")},
		"b/m": {forbidden("b"), forbidden("b"), forbidden("b"), forbidden("b")},
	}}
	src, s := startFollower(t, logs, "m")
	src.Add(pod("a", corev1.PodRunning, "m"))
	src.Add(pod("b", corev1.PodRunning, "m"))
	eventually(t, "both streams retried past their 403s", func() bool {
		return len(logs.opened("a/m")) > 4 && len(logs.opened("b/m")) > 4
	})
	errs := s.errors()
	if len(errs) != 1 {
		t.Fatalf("%d Error lines, want 1: %v", len(errs), errs)
	}
	ev := errs[0]
	for _, want := range []string{"--controller-logs-from demo/deploy/mgr", "get on pods/log", "--verb=get,list,watch --resource=pods,pods/log", "--user=bob"} {
		if !strings.Contains(ev.Lifecycle.Message, want) {
			t.Errorf("message %q lacks %q", ev.Lifecycle.Message, want)
		}
	}
	if ev.Lifecycle.Reason != "Forbidden" || ev.Lifecycle.Verb != Verb {
		t.Errorf("reason %q verb %q, want Forbidden %s", ev.Lifecycle.Reason, ev.Lifecycle.Verb, Verb)
	}
	// Once the permission is granted, the streams open and say so.
	eventually(t, "a Recovered line", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.events[len(s.events)-1].Type == watch.Recovered
	})
}

// The pods are listed and watched by the workload's selector.
func TestFollowerSelector(t *testing.T) {
	cs := fake.NewClientset()
	f := &Follower{Client: cs, Workload: Workload{Namespace: "demo", Name: "deployment.apps/mgr", LabelSelector: "app=mgr"}, Flag: "deploy/mgr"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &sink{lines: map[string][]string{}}
	go func() {
		f.Run(ctx, s.Sink())
		close(done)
	}()
	// client-go's informers list by a streaming watch (WatchList) first: a watch is enough.
	eventually(t, "a watch by the selector", func() bool {
		for _, a := range cs.Actions() {
			if w, ok := a.(k8stesting.WatchAction); ok && w.GetNamespace() == "demo" && w.GetWatchRestrictions().Labels.String() == "app=mgr" {
				return true
			}
		}
		return false
	})
	cancel()
	<-done
}

// An expired watch (410, "too old resource version") is the informer's own business, not an
// Error line: the reflector lists again. Another failure to list is said, once per streak.
func TestFollowerExpiredWatchIsNoError(t *testing.T) {
	s := &sink{lines: map[string][]string{}}
	f := &Follower{Workload: Workload{Namespace: "demo", Name: "deployment.apps/mgr"}, Flag: "demo/deploy/mgr"}
	f.listFailed(apierrors.NewResourceExpired("too old resource version: 0 (1)"), s.Sink())
	f.listFailed(&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone, Message: "the watch expired"}}, s.Sink())
	if errs := s.errors(); len(errs) != 0 {
		t.Fatalf("an expired watch made Error lines: %v", errs)
	}
	f.listFailed(errors.New("connection refused"), s.Sink())
	f.listFailed(errors.New("connection refused"), s.Sink())
	if errs := s.errors(); len(errs) != 1 || errs[0].Lifecycle.Reason != "PodListFailed" {
		t.Fatalf("a failing list made %v, want one PodListFailed line", errs)
	}
}

// A line whose kubelet timestamp steps back (a node's clock set back) is passed on
// (HOSTILE-CASES-2 F11: every line older than the last one read was dropped, silently), in the
// stream it came in and in a reopened one; only exact re-reads after a reopening are dropped.
func TestResumeKeepsTimeSteppingBack(t *testing.T) {
	var r resume
	var got []string
	feed := func(s string) {
		if err := readLines(strings.NewReader(s), func(b []byte) {
			if rest, ok := r.keep(b); ok {
				got = append(got, string(rest))
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	r.reopen()
	back := ts(5, 0).Add(-time.Hour)
	feed(stamped(ts(5, 100), "a") + stamped(ts(5, 200), "b") + stamped(back, "back1") + stamped(ts(5, 300), "c"))
	since := r.reopen()
	if since == nil || !since.Time.Equal(ts(5, 300)) {
		t.Fatalf("reopened since %v, want the newest line's time", since)
	}
	// Sent again from the second of c: a, b, c again; then a new line stamped in that second
	// but before c (the clock stepped back again), and one after.
	feed(stamped(ts(5, 100), "a") + stamped(ts(5, 200), "b") + stamped(ts(5, 300), "c") + stamped(ts(5, 150), "back2") + stamped(ts(6, 0), "d"))
	if diff := cmp.Diff([]string{"a", "b", "back1", "c", "back2", "d"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
