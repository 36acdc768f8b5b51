package printer

import (
	"io"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// analyze completes events in place as the analysis step does before every output: changes
// and attribution of updates (the printer only reads them).
func analyze(events []watch.Event) {
	step := analysis.New(analysis.Config{Changes: true})
	for i := range events {
		step.Analyze(nil, &events[i])
	}
}

// writeSummary renders s under a fixed title.
func writeSummary(w io.Writer, s *summary.Summary) error {
	return WriteSummary(w, "summary after 0s", s)
}
