package watch

// This file holds the figures a --metrics-url scrape reads of a controller's workqueue
// (ControllerQueue lines): internal/scrape parses the Prometheus page into them.

// ReconcileResults counts controller_runtime_reconcile_total by its result label.
type ReconcileResults struct {
	Success      float64 `json:"success"`
	Error        float64 `json:"error"`
	Requeue      float64 `json:"requeue"`
	RequeueAfter float64 `json:"requeue_after"`
}

// Total is the number of reconciles, whatever their result.
func (r ReconcileResults) Total() float64 { return r.Success + r.Error + r.Requeue + r.RequeueAfter }

// QueueSample is one workqueue's state at scrape time.
//
// Series that share (name, controller) but differ in other labels are summed (histograms bucket
// by bucket, like sum by (le) in PromQL); controller-runtime's priority queue, for instance,
// exports one workqueue_depth series per priority. LongestRunningSeconds takes the maximum
// instead, since it is not additive.
type QueueSample struct {
	// Labels; Controller empty when absent.
	Name       string `json:"name"`
	Controller string `json:"controller"`

	Depth                 float64 `json:"depth"`
	Adds                  float64 `json:"adds"`
	Retries               float64 `json:"retries"`
	UnfinishedSeconds     float64 `json:"unfinishedSeconds"`
	LongestRunningSeconds float64 `json:"longestRunningSeconds"`

	// Quantiles in seconds, estimated from the classic histogram buckets the way PromQL's
	// histogram_quantile does (linear interpolation within the bucket). They are cumulative over
	// the process lifetime, not over a recent window. A quantile is 0 and its Has flag false when
	// the histogram is absent or has no observations (0 rather than NaN keeps QueueSample
	// encodable as JSON).
	QueueP50        float64 `json:"queueP50Seconds"`
	QueueP99        float64 `json:"queueP99Seconds"`
	WorkP50         float64 `json:"workP50Seconds"`
	WorkP99         float64 `json:"workP99Seconds"`
	HasQueueLatency bool    `json:"-"`
	HasWorkLatency  bool    `json:"-"`

	// controller-runtime's reconcile metrics of the queue's controller; HasReconciles is false
	// when the page has none for it (kube-controller-manager, plain client-go controllers).
	HasReconciles           bool             `json:"-"`
	Reconciles              ReconcileResults `json:"reconciles"`
	ReconcileErrors         float64          `json:"reconcileErrors"`
	TerminalReconcileErrors float64          `json:"terminalReconcileErrors"`
	ReconcilePanics         float64          `json:"reconcilePanics"`
	// ActiveWorkers and MaxConcurrentReconciles; HasWorkers is false when absent.
	ActiveWorkers           float64 `json:"activeWorkers"`
	MaxConcurrentReconciles float64 `json:"maxConcurrentReconciles"`
	HasWorkers              bool    `json:"-"`
	// Reconcile time quantiles (controller_runtime_reconcile_time_seconds), like QueueP50.
	ReconcileP50     float64 `json:"reconcileP50Seconds"`
	ReconcileP99     float64 `json:"reconcileP99Seconds"`
	HasReconcileTime bool    `json:"-"`

	// Rates per second since the previous scrape of the same queue, set by Tracker; HasRates
	// is false on a queue's first line and after a counter went backwards (a restart).
	HasRates                 bool    `json:"-"`
	AddsPerSecond            float64 `json:"addsPerSecond"`
	ReconcilesPerSecond      float64 `json:"reconcilesPerSecond"`
	RetriesPerSecond         float64 `json:"retriesPerSecond"`
	ReconcileErrorsPerSecond float64 `json:"reconcileErrorsPerSecond"`
	// Insecure is set when the scrape did not verify the server's certificate.
	Insecure bool `json:"insecure"`
	// From names the port-forward the page was scraped through (--metrics-from), with its pod.
	From string `json:"from"`
	// Folded is how many scrapes in a row, before this one, found the queue unchanged since its
	// previous line (Tracker prints no line for them).
	Folded int `json:"foldedScrapes"`
	// LogShows is how many of the controller's reconciles its logs (--controller-logs) had
	// shown when the line was made, set by the summary when logs are read (HasLogShows).
	LogShows    int  `json:"logShows"`
	HasLogShows bool `json:"-"`
	// Steady is how many scrapes since its previous line found its figures moved only steadily
	// (counters at an unchanged rate, no change of depth, no failure): Tracker gives such a
	// queue a line a minute.
	Steady int `json:"steadyScrapes"`
}
