package reenact

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Clients are the clients a reenactment writes with.
type Clients struct {
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
}

// NewClients is the write opt-in: the only place kubectl-informer builds clients that may
// create, patch and delete. Every other command reads (list, watch, get); reenact alone writes,
// and every client it writes with comes from here, so that a read-only transport elsewhere can
// refuse non-GET requests by default and this function alone allow them.
func NewClients(cfg *rest.Config) (*Clients, error) {
	cfg = writeConfig(cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making the reenactment's client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("making the reenactment's discovery client: %w", err)
	}
	return &Clients{Dynamic: dyn, Discovery: dc}, nil
}

// The write client's rate: client-go's default (5 requests a second, bursts of 10) played a
// recording of a few hundred writes (a read and a write each) minutes behind its recorded pace
// and its settle time; the API server's priority and fairness still bounds it.
const (
	writeQPS   = 200
	writeBurst = 400
)

// writeConfig is cfg as the reenactment writes with it: its user agent, and a rate that keeps
// up with a recording.
func writeConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-informer-reenact"
	cfg.QPS, cfg.Burst = writeQPS, writeBurst
	return cfg
}

// NewSourceClient is a client of the source cluster, used only to read (GET) the CRDs the target
// lacks (--crds-from-context).
func NewSourceClient(cfg *rest.Config) (dynamic.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-informer-reenact"
	return dynamic.NewForConfig(cfg)
}
