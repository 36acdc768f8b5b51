package cmd

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/kubectl-informer/kubectl-informer/internal/clients"
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
func (a *APIOptions) limits() (float32, int) { return clients.Limits(a.QPS, a.Burst) }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// warnTo says a client-go warning (an ambiguous short name) on w, as kubectl does.
func warnTo(w io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(w, "Warning: "+printer.Escape(s)) }
}
