package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// A loop found, then its end a window later: a HotLoopEnded line with the episode's totals, in
// human output and JSON, decoded back the same; the summary lists it.
func TestHotLoopEndedLine(t *testing.T) {
	res := discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget"}
	h := analysis.New(analysis.Config{HotLoopUpdates: 3, HotLoopWindow: 10 * time.Second})
	t0 := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)
	old := map[string]any{"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "1"}, "status": map[string]any{"t": "0"}}
	var found int
	sum := summary.New()
	for i := range 6 {
		cur := map[string]any{"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": string(rune('2' + i))}, "status": map[string]any{"t": string(rune('a' + i))}}
		ev := watch.Event{
			Type: watch.Updated,
			Obj: watch.ObjectInfo{
				Delta:              watch.DeltaUpdated,
				OldResourceVersion: string(rune('1' + i)),
				Object:             &unstructured.Unstructured{Object: cur},
				OldObject:          &unstructured.Unstructured{Object: old},
			},
			Time:            t0.Add(time.Duration(i) * time.Second),
			Resource:        res,
			Namespace:       "ns",
			Name:            "w",
			ResourceVersion: string(rune('2' + i)),
		}
		for _, out := range h.Analyze(nil, &ev)[1:] {
			found++
			sum.Add(&out)
		}
		old = cur
	}
	if found != 1 {
		t.Fatalf("%d HotLoop lines, want 1", found)
	}
	ended := h.Ended(t0.Add(20 * time.Second))
	if len(ended) != 1 {
		t.Fatalf("%d HotLoopEnded events, want 1", len(ended))
	}
	ev := ended[0]
	sum.Add(&ev)
	for _, out := range []OutputFormat{"", "json"} {
		var b bytes.Buffer
		p := New(&b, Options{Output: out, Timestamps: "none"})
		if err := p.Print(&ev); err != nil {
			t.Fatal(err)
		}
		_ = p.Flush()
		got := b.String()
		switch out {
		case "":
			if want := "HotLoopEnded widgets.example.com  ns/w  hot loop ended: 6 updates in 5s (busy)"; !strings.Contains(got, want) {
				t.Errorf("human %q, want %q", got, want)
			}
		case "json":
			for _, want := range []string{`"type":"HotLoopEnded"`, `"key":"ns/w"`, `"updates":6`, `"durationSeconds":5`, `"loop":"busy"`, `"objectDeleted":false`} {
				if !strings.Contains(got, want) {
					t.Errorf("JSON %s lacks %s", got, want)
				}
			}
			d, err := recording.DecodeLine([]byte(strings.TrimSpace(got)))
			if err != nil {
				t.Fatal(err)
			}
			if d.Event.Type != watch.HotLoopEnded || d.Event.HotLoop == nil || d.Event.HotLoop.Updates != 6 || d.Event.HotLoop.Duration != 5*time.Second || d.Event.HotLoop.Loop != "busy" || d.Event.Key != "ns/w" {
				t.Errorf("decoded %+v", d.Event)
			}
		}
	}
	var sb bytes.Buffer
	if err := writeSummary(&sb, sum); err != nil {
		t.Fatal(err)
	}
	if want := "hot loops: 1 found, 1 ended\n  widgets.example.com ns/w: busy, 6 updates in 5s (ended)"; !strings.Contains(sb.String(), want) {
		t.Errorf("summary:\n%s\nwant %q", sb.String(), want)
	}
}
