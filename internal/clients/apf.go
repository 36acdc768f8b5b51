package clients

import (
	"context"
	"fmt"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// ResolveAPFNames starts reading the names of the API Priority and Fairness levels (beside the
// run's first requests, not before them) and has s.Stats resolve its figures' UIDs to them.
func (s *Set) ResolveAPFNames(ctx context.Context) {
	s.Stats.Resolve = NewAPFNames(ctx, s.Dynamic).Resolve
}

var (
	flowSchemas    = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}
	priorityLevels = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}
)

// APFNames resolves APF UIDs to names from the flowschemas and prioritylevelconfigurations the
// user may list, read once at start (beside the informers' first requests, not before them) and
// again (at most every 10s) for a UID not known yet.
type APFNames struct {
	client dynamic.Interface
	first  chan struct{} // closed when the first read is done

	mu      sync.Mutex
	names   map[string]string // uid -> name, of both kinds
	note    string            // why names cannot be known
	fetched time.Time
}

// NewAPFNames starts the first read of the names, beside the caller.
func NewAPFNames(ctx context.Context, client dynamic.Interface) *APFNames {
	n := &APFNames{client: client, first: make(chan struct{})}
	go func() {
		defer close(n.first)
		n.fetch(ctx)
	}()
	return n
}

func (n *APFNames) fetch(ctx context.Context) {
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
func (n *APFNames) resolve(ctx context.Context, a apistats.APF) apistats.APF {
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

// Resolve fills a's names (an apistats.Recorder's Resolve).
func (n *APFNames) Resolve(ctx context.Context, a apistats.APF) apistats.APF {
	return n.resolve(ctx, a)
}

// FlowSchemas lists the cluster's FlowSchemas, as their Go type.
func FlowSchemas(ctx context.Context, client dynamic.Interface) ([]flowcontrolv1.FlowSchema, error) {
	list, err := client.Resource(flowSchemas).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var typed flowcontrolv1.FlowSchemaList
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.UnstructuredContent(), &typed); err != nil {
		return nil, err
	}
	return typed.Items, nil
}
