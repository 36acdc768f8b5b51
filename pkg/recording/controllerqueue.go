package recording

import (
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// controllerQueueRecord is a scraped controller workqueue (docs/json.md, ControllerQueue). A line
// with Message and no Name says the page had no workqueue metrics.
type controllerQueueRecord struct {
	Time                  string     `json:"time"`
	Type                  watch.Type `json:"type"`
	URL                   string     `json:"url"`
	Name                  string     `json:"name"`
	Controller            string     `json:"controller,omitempty"`
	Depth                 float64    `json:"depth"`
	Adds                  float64    `json:"adds"`
	Retries               float64    `json:"retries"`
	UnfinishedSeconds     float64    `json:"unfinishedSeconds"`
	LongestRunningSeconds float64    `json:"longestRunningSeconds"`
	QueueP50Seconds       *float64   `json:"queueP50Seconds,omitempty"`
	QueueP99Seconds       *float64   `json:"queueP99Seconds,omitempty"`
	WorkP50Seconds        *float64   `json:"workP50Seconds,omitempty"`
	WorkP99Seconds        *float64   `json:"workP99Seconds,omitempty"`
	controllerQueueExtra
	// Message: an empty page's (emptyPageRecord); never set with a Name.
	Message string `json:"message,omitempty"`
}

// controllerQueueExtra are the fields added with controller-runtime's reconcile metrics, rates
// and folding.
type controllerQueueExtra struct {
	Reconciles               *watch.ReconcileResults `json:"reconciles,omitempty"`
	ReconcileErrors          *float64                `json:"reconcileErrors,omitempty"`
	TerminalReconcileErrors  *float64                `json:"terminalReconcileErrors,omitempty"`
	ReconcilePanics          *float64                `json:"reconcilePanics,omitempty"`
	ActiveWorkers            *float64                `json:"activeWorkers,omitempty"`
	MaxConcurrentReconciles  *float64                `json:"maxConcurrentReconciles,omitempty"`
	ReconcileP50Seconds      *float64                `json:"reconcileP50Seconds,omitempty"`
	ReconcileP99Seconds      *float64                `json:"reconcileP99Seconds,omitempty"`
	AddsPerSecond            *float64                `json:"addsPerSecond,omitempty"`
	RetriesPerSecond         *float64                `json:"retriesPerSecond,omitempty"`
	ReconcilesPerSecond      *float64                `json:"reconcilesPerSecond,omitempty"`
	ReconcileErrorsPerSecond *float64                `json:"reconcileErrorsPerSecond,omitempty"`
	FoldedScrapes            int                     `json:"foldedScrapes,omitempty"`
	SteadyScrapes            int                     `json:"steadyScrapes,omitempty"`
	LogShows                 *int                    `json:"logShows,omitempty"`
	Insecure                 bool                    `json:"insecure,omitempty"`
	From                     string                  `json:"from,omitempty"`
}

// emptyPageRecord is the ControllerQueue line of a page without workqueue metrics.
type emptyPageRecord struct {
	Time    string     `json:"time"`
	Type    watch.Type `json:"type"`
	URL     string     `json:"url"`
	Message string     `json:"message"`
}

func controllerQueueOf(ev *watch.Event) any {
	q := ev.Scrape.Sample
	if q == nil {
		return emptyPageRecord{Time: formatTime(ev.Time), Type: ev.Type, URL: ev.Scrape.URL, Message: ev.Lifecycle.Message}
	}
	r := controllerQueueRecord{
		Time: formatTime(ev.Time), Type: ev.Type, URL: ev.Scrape.URL, Name: q.Name, Controller: q.Controller,
		Depth: q.Depth, Adds: q.Adds, Retries: q.Retries,
		UnfinishedSeconds: q.UnfinishedSeconds, LongestRunningSeconds: q.LongestRunningSeconds,
	}
	if q.HasQueueLatency {
		r.QueueP50Seconds, r.QueueP99Seconds = ptr(q.QueueP50), ptr(q.QueueP99)
	}
	if q.HasWorkLatency {
		r.WorkP50Seconds, r.WorkP99Seconds = ptr(q.WorkP50), ptr(q.WorkP99)
	}
	x := &r.controllerQueueExtra
	if q.HasReconciles {
		x.Reconciles = ptr(q.Reconciles)
		x.ReconcileErrors, x.TerminalReconcileErrors, x.ReconcilePanics = ptr(q.ReconcileErrors), ptr(q.TerminalReconcileErrors), ptr(q.ReconcilePanics)
	}
	if q.HasWorkers {
		x.ActiveWorkers, x.MaxConcurrentReconciles = ptr(q.ActiveWorkers), ptr(q.MaxConcurrentReconciles)
	}
	if q.HasReconcileTime {
		x.ReconcileP50Seconds, x.ReconcileP99Seconds = ptr(q.ReconcileP50), ptr(q.ReconcileP99)
	}
	if q.HasRates {
		x.AddsPerSecond, x.RetriesPerSecond = ptr(q.AddsPerSecond), ptr(q.RetriesPerSecond)
		if q.HasReconciles {
			x.ReconcilesPerSecond, x.ReconcileErrorsPerSecond = ptr(q.ReconcilesPerSecond), ptr(q.ReconcileErrorsPerSecond)
		}
	}
	x.FoldedScrapes, x.SteadyScrapes, x.Insecure, x.From = q.Folded, q.Steady, q.Insecure, q.From
	if q.HasLogShows {
		x.LogShows = ptr(q.LogShows)
	}
	return r
}

// sampleExtra fills the sample's reconcile, rate and folding figures from a recorded line.
func (x *controllerQueueExtra) sampleExtra(s *watch.QueueSample) {
	if x.Reconciles != nil {
		s.HasReconciles, s.Reconciles = true, *x.Reconciles
		s.ReconcileErrors, s.TerminalReconcileErrors, s.ReconcilePanics = deref(x.ReconcileErrors), deref(x.TerminalReconcileErrors), deref(x.ReconcilePanics)
	}
	if x.ActiveWorkers != nil || x.MaxConcurrentReconciles != nil {
		s.HasWorkers, s.ActiveWorkers, s.MaxConcurrentReconciles = true, deref(x.ActiveWorkers), deref(x.MaxConcurrentReconciles)
	}
	if x.ReconcileP50Seconds != nil || x.ReconcileP99Seconds != nil {
		s.HasReconcileTime, s.ReconcileP50, s.ReconcileP99 = true, deref(x.ReconcileP50Seconds), deref(x.ReconcileP99Seconds)
	}
	if x.AddsPerSecond != nil {
		s.HasRates = true
		s.AddsPerSecond, s.RetriesPerSecond = deref(x.AddsPerSecond), deref(x.RetriesPerSecond)
		s.ReconcilesPerSecond, s.ReconcileErrorsPerSecond = deref(x.ReconcilesPerSecond), deref(x.ReconcileErrorsPerSecond)
	}
	s.Folded, s.Steady, s.Insecure, s.From = x.FoldedScrapes, x.SteadyScrapes, x.Insecure, x.From
	if x.LogShows != nil {
		s.LogShows, s.HasLogShows = *x.LogShows, true
	}
}

// event is the inverse of controllerQueueOf.
func (r *controllerQueueRecord) event(ev *watch.Event) error {
	ev.Scrape.URL = r.URL
	if r.Name == "" && r.Message != "" { // a page without workqueue metrics
		ev.Lifecycle.Message = r.Message
		return nil
	}
	ev.Scrape.Sample = &watch.QueueSample{
		Name: r.Name, Controller: r.Controller, Depth: r.Depth, Adds: r.Adds, Retries: r.Retries,
		UnfinishedSeconds: r.UnfinishedSeconds, LongestRunningSeconds: r.LongestRunningSeconds,
	}
	if r.QueueP50Seconds != nil || r.QueueP99Seconds != nil {
		ev.Scrape.Sample.HasQueueLatency = true
		ev.Scrape.Sample.QueueP50, ev.Scrape.Sample.QueueP99 = deref(r.QueueP50Seconds), deref(r.QueueP99Seconds)
	}
	if r.WorkP50Seconds != nil || r.WorkP99Seconds != nil {
		ev.Scrape.Sample.HasWorkLatency = true
		ev.Scrape.Sample.WorkP50, ev.Scrape.Sample.WorkP99 = deref(r.WorkP50Seconds), deref(r.WorkP99Seconds)
	}
	r.sampleExtra(ev.Scrape.Sample)
	return nil
}
