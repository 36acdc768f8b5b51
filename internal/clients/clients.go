// Package clients sets up the plugin's clients of the API server, in one place for every
// command that runs informers (watch, reenact's watch, top): the reachability check, the REST
// config the informers use, its accounting by pkg/apistats, and the dynamic and metadata
// clients.
package clients

import (
	"net/http"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// Options says how the clients are built.
type Options struct {
	// QPS and Burst of the client-side rate limiter (--qps, --burst); QPS 0 is client-go's
	// default (5 qps, burst 10), QPS < 0 turns the limiter off (as controller-runtime does).
	QPS   float32
	Burst int
	// Metadata asks for the metadata client too (--metadata-only, top).
	Metadata bool
}

// Set is the clients of one run, all on one accounted REST config.
type Set struct {
	// Server is the server's version, asked first.
	Server *version.Info
	// Discovery is the kubeconfig's (disk-cached) discovery client.
	Discovery discovery.CachedDiscoveryInterface
	// REST is the informers' config: no overall timeout, instrumented by Stats.
	REST *rest.Config
	// Dynamic is the informers' client; Metadata the metadata client, nil unless asked for.
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	// Stats accounts for every request made through REST (pkg/apistats).
	Stats *apistats.Recorder
}

// New checks that the server answers (one cheap request, within --request-timeout), then builds
// the informers' REST config and its clients. Call ResolveAPFNames once the run's first
// requests are made, to name the API Priority and Fairness levels in Stats.
func New(getter genericclioptions.RESTClientGetter, o Options) (*Set, error) {
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	// One cheap request first: an unreachable server fails here, within --request-timeout,
	// instead of the informer retrying forever behind a disk-cached discovery. It stays before
	// the discovery's own requests, not beside them: two first requests at once dial two
	// connections, and at -v=6 and above client-go's request logger then races with itself
	// (a dial's timing callback writing after its request was served by the other connection;
	// the race detector's build of test/e2e caught it).
	sv, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	restCfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	// --request-timeout bounds discovery and the version check; a watch is long by design.
	restCfg = ForInformers(restCfg)
	// Every LIST and WATCH of the informers is accounted for (pkg/apistats), in the transport
	// and the client-side rate limiter.
	stats := apistats.NewRecorder()
	Instrument(restCfg, stats, o.QPS, o.Burst)
	s := &Set{Server: sv, Discovery: dc, REST: restCfg, Stats: stats}
	if s.Dynamic, err = dynamic.NewForConfig(restCfg); err != nil {
		return nil, err
	}
	if o.Metadata {
		if s.Metadata, err = metadata.NewForConfig(restCfg); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ForInformers returns the client config the informers use: no overall request timeout, which
// would cut every watch stream short; the reflector sets each watch's own timeout.
func ForInformers(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.Timeout = 0
	return c
}

// Limits returns the rate limiter's QPS and burst as the client will use them.
func Limits(qps float32, burst int) (float32, int) {
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

// Instrument makes c's requests counted by stats: its transport (innermost, closest to the
// connection) and its rate limiter of qps and burst (see Limits).
func Instrument(c *rest.Config, stats *apistats.Recorder, qps float32, burst int) {
	prev := c.WrapTransport
	disableCompression := c.DisableCompression
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = stats.Wrap(rt, disableCompression)
		if prev != nil {
			rt = prev(rt)
		}
		return rt
	}
	qps, burst = Limits(qps, burst)
	c.QPS, c.Burst = qps, burst
	if qps > 0 {
		c.RateLimiter = stats.RateLimiter(flowcontrol.NewTokenBucketRateLimiter(qps, burst))
	}
}
