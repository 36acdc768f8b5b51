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
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-informer-reenact"
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

// NewSourceClient is a client of the source cluster, used only to read (GET) the CRDs the target
// lacks (--crds-from-context).
func NewSourceClient(cfg *rest.Config) (dynamic.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubectl-informer-reenact"
	return dynamic.NewForConfig(cfg)
}
