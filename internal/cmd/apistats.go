package cmd

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// WireEnv is the environment variable that gives --wire its default (a whole session, or a
// whole test suite, on one wire format).
const WireEnv = "KUBECTL_INFORMER_WIRE"

// APIOptions are the flags of the plugin's own API client and of its accounting.
type APIOptions struct {
	// Interval of the ApiStats lines (--api-stats); 0: only at exit (in -o json and the summary).
	Interval time.Duration
	// QPS and Burst of the client-side rate limiter (--qps, --burst); QPS 0 is client-go's
	// default (5 qps, burst 10), QPS < 0 turns the limiter off (as controller-runtime does).
	QPS   float32
	Burst int
	// ListMode is --list-mode; ChunkSize the LIST page size (--chunk-size, 0: client-go's).
	ListMode  string
	ChunkSize int64
	// Wire is --wire: auto (built-in resources in protobuf, custom resources in JSON) or json.
	Wire string
}

// AddFlags registers the flags.
func (a *APIOptions) AddFlags(f *pflag.FlagSet) {
	f.DurationVar(&a.Interval, "api-stats", a.Interval, "Print an ApiStats line per resource at this interval (e.g. 1m): requests by verb and code, list pages, bytes, objects, watch streams, 429s, client-side throttling. -o json always has them at exit, the summary always says them.")
	f.Float32Var(&a.QPS, "qps", a.QPS, "Client-side rate limit of the informers' requests, per second (0: client-go's default, 5 with burst 10; a negative value turns the limiter off, as controller-runtime does by default; kube-controller-manager uses 50, burst 100).")
	f.IntVar(&a.Burst, "burst", a.Burst, "Burst of the client-side rate limiter (0: client-go's default, 10).")
	f.StringVar(&a.ListMode, "list-mode", watch.ListModeAuto, "How the informers list: auto (client-go's default, as a controller built with it would: streaming lists unless KUBE_FEATURE_WatchListClient=false), watchlist (a streaming list: WATCH with sendInitialEvents, falling back to LIST when the server refuses) or list (paginated LIST, then WATCH).")
	wire := watch.WireAuto
	if env := os.Getenv(WireEnv); env != "" {
		wire = env
	}
	f.StringVar(&a.Wire, "wire", wire, "Wire format of the informers' lists and watches: auto (built-in resources in protobuf, as client-go's typed clients and kube-controller-manager use them; custom resources in JSON) or json (everything in JSON, for comparison or a server that misbehaves). Default: $KUBECTL_INFORMER_WIRE, else auto.")
	f.Int64Var(&a.ChunkSize, "chunk-size", a.ChunkSize, "Page size (limit) of the informers' LIST requests, as kubectl's --chunk-size. 0: as a controller lists (the reflector's first list, at resourceVersion 0, comes whole from the watch cache; client-go pages others by 500); with a page size the first list is a consistent read (resourceVersion \"\"), which the server pages.")
}

// Validate checks the flags.
func (a *APIOptions) Validate() error {
	if a.Interval < 0 {
		return fmt.Errorf("--api-stats must be >= 0, got %s", a.Interval)
	}
	if a.QPS != a.QPS || math.IsInf(float64(a.QPS), 0) {
		return fmt.Errorf("--qps must be a number, got %v", a.QPS)
	}
	if a.Burst < 0 {
		return fmt.Errorf("--burst must be >= 0, got %d", a.Burst)
	}
	if a.ChunkSize < 0 {
		return fmt.Errorf("--chunk-size must be >= 0, got %d", a.ChunkSize)
	}
	if a.ListMode == "" {
		a.ListMode = watch.ListModeAuto
	}
	if !slices.Contains(watch.ListModes, a.ListMode) {
		return fmt.Errorf("--list-mode must be one of %s; got %q", strings.Join(watch.ListModes, ", "), a.ListMode)
	}
	if a.Wire == "" {
		a.Wire = watch.WireAuto
	}
	if !slices.Contains(watch.Wires, a.Wire) {
		return fmt.Errorf("--wire must be one of %s; got %q", strings.Join(watch.Wires, ", "), a.Wire)
	}
	return nil
}

// limits returns the rate limiter's QPS and burst as the client will use them.
func (a *APIOptions) limits() (float32, int) {
	qps, burst := a.QPS, a.Burst
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	if qps < 0 {
		return -1, 0
	}
	return qps, burst
}

// instrument makes c's requests counted by stats: its transport (innermost, closest to the
// connection) and its rate limiter.
func (a *APIOptions) instrument(c *rest.Config, stats *apistats.Recorder) {
	prev := c.WrapTransport
	disableCompression := c.DisableCompression
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = stats.Wrap(rt, disableCompression)
		if prev != nil {
			rt = prev(rt)
		}
		return rt
	}
	qps, burst := a.limits()
	c.QPS, c.Burst = qps, burst
	if qps > 0 {
		c.RateLimiter = stats.RateLimiter(flowcontrol.NewTokenBucketRateLimiter(qps, burst))
	}
}

var (
	flowSchemas    = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}
	priorityLevels = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}
)

// apfNames resolves APF UIDs to names from the flowschemas and prioritylevelconfigurations the
// user may list, read once at start (beside the informers' first requests, not before them) and
// again (at most every 10s) for a UID not known yet.
type apfNames struct {
	client dynamic.Interface
	first  chan struct{} // closed when the first read is done

	mu      sync.Mutex
	names   map[string]string // uid -> name, of both kinds
	note    string            // why names cannot be known
	fetched time.Time
}

func newAPFNames(ctx context.Context, client dynamic.Interface) *apfNames {
	n := &apfNames{client: client, first: make(chan struct{})}
	go func() {
		defer close(n.first)
		n.fetch(ctx)
	}()
	return n
}

func (n *apfNames) fetch(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names := map[string]string{}
	var note string
	for _, gvr := range []schema.GroupVersionResource{flowSchemas, priorityLevels} {
		l, err := n.client.Resource(gvr).List(ctx, metav1.ListOptions{})
		switch {
		case apierrors.IsForbidden(err):
			note = fmt.Sprintf("names not shown: the user may not list %s.%s (kubectl auth can-i list %s.%s)", gvr.Resource, gvr.Group, gvr.Resource, gvr.Group)
		case err != nil:
			note = "names not shown: reading " + gvr.Resource + ": " + err.Error()
		default:
			for _, it := range l.Items {
				names[string(it.GetUID())] = it.GetName()
			}
		}
		if note != "" {
			break
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fetched = time.Now()
	n.note = note
	if note == "" {
		n.names = names
	}
}

// resolve fills a's names.
func (n *apfNames) resolve(ctx context.Context, a apistats.APF) apistats.APF {
	select {
	case <-n.first:
	default:
		// Not read yet: wait for them, unless the run ends first (a ready first read wins
		// over an ended run: the summary at the end resolves with the run's context done).
		select {
		case <-n.first:
		case <-ctx.Done():
			a.Note = "names not known: the run ended before they were read"
			return a
		}
	}
	n.mu.Lock()
	_, fsKnown := n.names[a.FlowSchemaUID]
	_, plKnown := n.names[a.PriorityLevelUID]
	stale := n.note == "" && (!fsKnown || !plKnown) && time.Since(n.fetched) > 10*time.Second
	n.mu.Unlock()
	if stale {
		n.fetch(ctx)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	a.FlowSchema, a.PriorityLevel = n.names[a.FlowSchemaUID], n.names[a.PriorityLevelUID]
	switch {
	case n.note != "":
		a.Note = n.note
	case a.FlowSchema == "" || a.PriorityLevel == "":
		a.Note = "names not found: created after the plugin started, or deleted"
	}
	return a
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgressLine returns the progress line of long lists for w, nil unless w is a terminal.
func newProgressLine(w io.Writer) *printer.ProgressLine {
	if !isTerminal(w) {
		return nil
	}
	f := w.(*os.File)
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return printer.NewProgressLine(w, width)
}
