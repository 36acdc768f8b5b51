package printer

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
)

func TestSummarySpans(t *testing.T) {
	s := summary.New()
	var b strings.Builder
	if err := writeSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "otlp:") {
		t.Errorf("a run without --otlp says spans:\n%s", b.String())
	}
	s.Spans = &summary.SpanReport{Spans: 120, Exported: 80, Dropped: 40}
	b.Reset()
	if err := writeSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	if want := "otlp: 120 spans, 80 exported, 40 spans dropped\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}
