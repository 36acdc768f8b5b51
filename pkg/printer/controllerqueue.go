package printer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// controllerQueueDetail writes a queue's figures: the workqueue's, then the controller's
// reconciles (controller-runtime), then the source. Rates are per second since the previous
// scrape.
func (p *Printer) controllerQueueDetail(b *strings.Builder, ev *watch.Event) {
	q := ev.Scrape.Sample
	if q == nil {
		fmt.Fprintf(b, "%s  (%s)", Escape(ev.Lifecycle.Message), Escape(ev.Scrape.URL))
		return
	}
	name := q.Name
	if q.Controller != "" && q.Controller != q.Name {
		name = q.Controller + "/" + q.Name
	}
	fmt.Fprintf(b, "%s  depth=%g adds=%g%s retries=%g%s", Escape(name), q.Depth,
		q.Adds, rateOf(q.HasRates, q.AddsPerSecond), q.Retries, rateOf(q.HasRates && q.Retries > 0, q.RetriesPerSecond))
	if q.HasReconciles {
		r := q.Reconciles
		fmt.Fprintf(b, " reconciles=%g%s (success=%g error=%g requeue=%g requeue_after=%g) errors=%g",
			r.Total(), rateOf(q.HasRates, q.ReconcilesPerSecond), r.Success, r.Error, r.Requeue, r.RequeueAfter, q.ReconcileErrors)
		if q.HasLogShows {
			fmt.Fprintf(b, " (its log shows %d of them so far)", q.LogShows)
		}
		if q.TerminalReconcileErrors > 0 {
			fmt.Fprintf(b, " terminal=%g", q.TerminalReconcileErrors)
		}
		if q.ReconcilePanics > 0 {
			fmt.Fprintf(b, " panics=%g", q.ReconcilePanics)
		}
	}
	if q.HasWorkers {
		fmt.Fprintf(b, " workers=%g/%g", q.ActiveWorkers, q.MaxConcurrentReconciles)
	}
	if q.HasReconcileTime {
		fmt.Fprintf(b, " reconcile p50=%s p99=%s", seconds(q.ReconcileP50), seconds(q.ReconcileP99))
	}
	if q.HasQueueLatency {
		fmt.Fprintf(b, " wait p50=%s p99=%s", seconds(q.QueueP50), seconds(q.QueueP99))
	}
	if q.HasWorkLatency {
		fmt.Fprintf(b, " work p50=%s p99=%s", seconds(q.WorkP50), seconds(q.WorkP99))
	}
	if q.UnfinishedSeconds > 0 || q.LongestRunningSeconds > 0 {
		fmt.Fprintf(b, " unfinished=%s longest=%s", seconds(q.UnfinishedSeconds), seconds(q.LongestRunningSeconds))
	}
	var notes []string
	if q.From != "" {
		notes = append(notes, "from "+q.From)
	}
	if q.Insecure {
		notes = append(notes, "certificate not verified")
	}
	if q.Folded > 0 {
		notes = append(notes, fmt.Sprintf("unchanged for %d scrapes before", q.Folded))
	}
	if q.Steady > 0 {
		notes = append(notes, fmt.Sprintf("%d scrapes before moved only steadily: a line a minute unless depth, adds or failures change", q.Steady))
	}
	fmt.Fprintf(b, "  (%s)", Escape(strings.Join(append([]string{ev.Scrape.URL}, notes...), "; ")))
}

// rateOf is " (+1.5/s)" when shown.
func rateOf(show bool, perSecond float64) string {
	if !show {
		return ""
	}
	return " (+" + strconv.FormatFloat(perSecond, 'g', 3, 64) + "/s)"
}

func seconds(f float64) string {
	return time.Duration(f * float64(time.Second)).Round(10 * time.Microsecond).String()
}
