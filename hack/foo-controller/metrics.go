package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	// client-go's workqueue metrics (workqueue_adds_total, workqueue_work_duration_seconds, ...
	// labelled {name}) in the legacy registry, as kube-controller-manager serves them.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

// QueueName is the workqueue's name: the {name} label of its workqueue_* metrics.
const QueueName = "foo"

// syncs counts the controller's syncs by object and result (success, error): the controller's
// own count of its reconciles, one per item taken off the workqueue. Labelled by object because
// this test controller reconciles a handful of Foos and the tests compare per object; a
// production controller would not label by object.
var syncs = metrics.NewCounterVec(&metrics.CounterOpts{
	Subsystem:      "foo_controller",
	Name:           "syncs_total",
	Help:           "Syncs of a Foo by the Foo controller, by the Foo and the sync's result.",
	StabilityLevel: metrics.ALPHA,
}, []string{"namespace", "name", "result"})

func init() { legacyregistry.MustRegister(syncs) }

// countSync counts one sync of ref.
func countSync(ref cache.ObjectName, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	syncs.WithLabelValues(ref.Namespace, ref.Name, result).Inc()
}

// serveMux is the controller's HTTP face: /healthz (200 once its informers have synced) and
// /metrics (Prometheus text).
func serveMux(synced *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !synced.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/metrics", legacyregistry.Handler())
	return mux
}
