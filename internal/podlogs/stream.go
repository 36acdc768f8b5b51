package podlogs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// maxLine bounds one line; the rest of a longer one is dropped.
const maxLine = 1 << 20

// Source names the log of a pod's container as ControllerReconcile lines say it
// (NAMESPACE/pod/NAME/CONTAINER): its last part, the container, stands for the controller
// when a klog line names none.
func Source(namespace, pod, container string) string {
	return namespace + "/pod/" + pod + "/" + container
}

// follow reads one container's log until ctx ends (its pod deleted, or the run over), opening
// the stream again whenever it ends or breaks.
func (f *Follower) follow(ctx context.Context, namespace, pod, container string, sink ctrllog.Sink) {
	line := sink.Open(Source(namespace, pod, container))
	open := f.stream
	if open == nil {
		open = func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
			return f.Client.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
		}
	}
	minB, maxB := f.minBackoff, f.maxBackoff
	if minB == 0 {
		minB, maxB = MinBackoff, MaxBackoff
	}
	var at resume
	failing := false
	backoff := minB
	for ctx.Err() == nil {
		// Timestamps: the kubelet's time of each line, to reopen the stream where it broke.
		opts := &corev1.PodLogOptions{Container: container, Follow: true, Timestamps: true, SinceTime: at.reopen()}
		rc, err := open(ctx, namespace, pod, opts)
		if err == nil {
			f.opened(sink)
			if failing {
				failing = false
				sink.Event(watch.Event{
					Type:      watch.Recovered,
					Lifecycle: watch.LifecycleInfo{Verb: Verb, Message: fmt.Sprintf("--controller-logs-from %s: the log of pod %s/%s container %s is read again", f.Flag, namespace, pod, container)},
					Namespace: namespace,
					Name:      pod,
				})
			}
			read := 0
			err = readLines(rc, func(b []byte) {
				if rest, ok := at.keep(b); ok {
					read++
					line(rest, time.Now())
				}
			})
			rc.Close()
			if read > 0 {
				backoff = minB
			}
		}
		if ctx.Err() != nil {
			return
		}
		// A stream that ends cleanly (the container stopped, the kubelet or API server closed
		// it) is opened again too; a pod that is gone ends with its deletion.
		if err != nil && !apierrors.IsNotFound(err) {
			if ev, say := f.failed(err, namespace, pod, container, !failing); say {
				sink.Event(ev)
			}
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxB)
	}
}

// opened ends a streak of 403s.
func (f *Follower) opened(sink ctrllog.Sink) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forbidden {
		f.forbidden = false
		sink.Event(watch.Event{
			Type:      watch.Recovered,
			Lifecycle: watch.LifecycleInfo{Verb: Verb, Message: fmt.Sprintf("--controller-logs-from %s: pod logs can be read again", f.Flag)},
			Namespace: f.Workload.Namespace,
		})
	}
}

// failed makes the Error line of a stream that could not be opened or broke: one per streak of
// the stream (first), and one for the 403s of all the workload's streams.
func (f *Follower) failed(err error, namespace, pod, container string, first bool) (watch.Event, bool) {
	ev := watch.Event{
		Type: watch.Error,
		Lifecycle: watch.LifecycleInfo{
			Verb:    Verb,
			Reason:  "PodLogFailed",
			Message: fmt.Sprintf("--controller-logs-from %s: the log of pod %s/%s container %s: %v; reading it again", f.Flag, namespace, pod, container, err),
		},
		Namespace: namespace,
		Name:      pod,
	}
	if apierrors.IsForbidden(err) {
		f.mu.Lock()
		defer f.mu.Unlock()
		said := f.forbidden
		f.forbidden = true
		ev.Lifecycle.Reason = "Forbidden"
		ev.Lifecycle.Message = fmt.Sprintf("--controller-logs-from %s: %v; reading pod logs needs get on pods/log (and list and watch on pods) in namespace %s: %s",
			f.Flag, err, namespace, GrantCommand(namespace, err))
		return ev, !said
	}
	return ev, first
}

// listFailed says, once per streak, that the workload's pods cannot be listed or watched. An
// expired resourceVersion (410 Gone, "too old resource version") is not a failure: the reflector
// lists again on its own, and client-go's default handler only logs it at -v=4.
func (f *Follower) listFailed(err error, sink ctrllog.Sink) {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr {
		return
	}
	f.listErr = true
	ev := watch.Event{
		Type: watch.Error,
		Lifecycle: watch.LifecycleInfo{
			Verb:    Verb,
			Reason:  "PodListFailed",
			Message: fmt.Sprintf("--controller-logs-from %s: list and watch the pods of %s: %v; trying again", f.Flag, f.Workload.Name, err),
		},
		Namespace: f.Workload.Namespace,
	}
	if apierrors.IsForbidden(err) {
		ev.Lifecycle.Reason = "Forbidden"
		ev.Lifecycle.Message = fmt.Sprintf("--controller-logs-from %s: %v; reading the pods of %s needs list and watch on pods (and get on pods/log) in namespace %s: %s",
			f.Flag, err, f.Workload.Name, f.Workload.Namespace, GrantCommand(f.Workload.Namespace, err))
	}
	sink.Event(ev)
}

var userRE = regexp.MustCompile(`User "([^"]+)" cannot`)

// GrantCommand is the kubectl command that lets the user a 403 names read pod logs in
// namespace (USER when the error does not name one).
func GrantCommand(namespace string, err error) string {
	subject := "--user=USER"
	if m := userRE.FindStringSubmatch(err.Error()); m != nil {
		subject = "--user=" + m[1]
	}
	ns := shell.Quote(namespace)
	return fmt.Sprintf("kubectl create role controller-log-reader -n %s --verb=get,list,watch --resource=pods,pods/log && kubectl create rolebinding controller-log-reader -n %s --role=controller-log-reader %s",
		ns, ns, shell.Quote(subject))
}

// resume remembers how far a stream was read, so that a reopened one, asked for the lines since
// the newest one's timestamp (which the API takes in whole seconds), passes on none twice. Only
// exact re-reads are dropped: a line of the same stream is always passed on, also when its
// timestamp steps back (a node's clock set back), and so is a new line of a reopened stream.
type resume struct {
	last time.Time // the newest kubelet timestamp passed on
	// seen counts the lines passed on stamped in last's second (whole lines, timestamp
	// included, by their hash): those a reopened stream sends again. skip: of a reopened
	// stream, those still to come again.
	seen, skip map[uint64]int
}

// maxSeen bounds the lines of one second remembered; beyond it, a reopened stream may pass some
// of that second's lines on twice.
const maxSeen = 1 << 16

// reopen is the SinceTime of the next stream (nil: from the log's start).
func (r *resume) reopen() *metav1.Time {
	r.skip = maps.Clone(r.seen)
	if r.last.IsZero() {
		return nil
	}
	return &metav1.Time{Time: r.last}
}

// keep reads the timestamp off a line of a stream opened with Timestamps and says whether the
// line is new. A line without one is passed on whole.
func (r *resume) keep(b []byte) ([]byte, bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return b, true
	}
	ts, err := time.Parse(time.RFC3339Nano, string(b[:i]))
	if err != nil {
		return b, true
	}
	h := fnv.New64a()
	h.Write(b)
	sum := h.Sum64()
	if r.skip[sum] > 0 {
		r.skip[sum]-- // sent again by a reopened stream
		return nil, false
	}
	if ts.After(r.last) {
		if sec := ts.Truncate(time.Second); !sec.Equal(r.last.Truncate(time.Second)) {
			clear(r.seen) // a reopened stream starts at ts's second: those before are not sent again
			clear(r.skip)
		}
		r.last = ts
	}
	if !ts.Before(r.last.Truncate(time.Second)) {
		if r.seen == nil {
			r.seen = map[uint64]int{}
		}
		if len(r.seen) < maxSeen {
			r.seen[sum]++
		}
	}
	return b[i+1:], true
}

// readLines hands each line of r (without its newline) to line, cut at maxLine, until r ends;
// io.EOF is a nil error. A last line without its newline (a stream broken in its middle) is
// dropped: the reopened stream sends it whole.
func readLines(r io.Reader, line func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, b[:min(len(b), maxLine-len(long))]...)
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		b = b[:len(b)-1]
		if long != nil {
			b = append(long, b[:min(len(b), maxLine-len(long))]...)
			long = nil
		}
		line(bytes.TrimSuffix(b, []byte("\r")))
	}
}
