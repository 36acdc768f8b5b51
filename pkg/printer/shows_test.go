package printer

import (
	"io"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// wantShows is what each output shows, said type by type.
func wantShows(p *Printer, ev *watch.Event) bool {
	if !p.opts.Output.IsHuman() {
		return ev.Type != watch.Reconciled || !p.opts.OmitReconciles
	}
	switch ev.Type {
	case watch.Bookmark:
		return p.opts.ShowBookmarks
	case watch.Reconciled:
		return p.opts.ShowReconciles
	case watch.ApiStats:
		return !ev.Stats.Final || p.opts.ShowAPIStats
	}
	return true
}

// Omits' table says what Shows said case by case, for every output and option.
func TestOmitsIsShows(t *testing.T) {
	types := append(append([]watch.Type{}, KnownTypes...), watch.Folded, watch.Dropped)
	for _, out := range []OutputFormat{"", OutputWide, "json", "yaml"} {
		for bits := range 16 {
			p := New(io.Discard, Options{Output: out, ShowBookmarks: bits&1 != 0, ShowReconciles: bits&2 != 0, ShowAPIStats: bits&4 != 0, OmitReconciles: bits&8 != 0})
			for _, typ := range types {
				for _, final := range []bool{false, true} {
					ev := &watch.Event{Type: typ, Stats: watch.StatsInfo{Final: final}}
					if got, want := p.Shows(ev), wantShows(p, ev); got != want {
						t.Errorf("-o %q options %04b: %s (final %v) shown %v, want %v", out, bits, typ, final, got, want)
					}
				}
			}
		}
	}
}
