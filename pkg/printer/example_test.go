package printer_test

import (
	"os"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Printing a replayed recording as `kubectl informer replay` does: the recording of
// pkg/replay's Example (ConfigMaps, an API server restarted in the middle), its object lines in
// human output, without the time column.
func Example() {
	rec, err := replay.Open("../replay/testdata/configmaps.ndjson")
	if err != nil {
		panic(err)
	}
	p := printer.New(os.Stdout, printer.Options{Timestamps: "none", NoHeaders: true})
	for i := range rec.Events {
		ev := &rec.Events[i]
		if ev.Type != watch.Added && ev.Type != watch.Deleted && ev.Type != watch.Relist {
			continue
		}
		if err := p.Print(ev); err != nil {
			panic(err)
		}
	}
	if err := p.Flush(); err != nil {
		panic(err)
	}
	// Output:
	// Added       configmaps  demo/a  rv=210  [initial list]
	// Added       configmaps  demo/b  rv=211  [initial list]
	// Added       configmaps  demo/c  rv=213  [initial list]
	// Added       configmaps  demo/d  rv=218
	// Deleted     configmaps  demo/d  rv=220
	// Relist      configmaps  RELIST from rv=220 to rv=226: 1 added, 1 updated, 1 deleted, 1 unchanged (after: Expired: too old resource version: 220 (226))
	// Deleted     configmaps  demo/b  rv=211  [TOMBSTONE: gone when the informer relisted; deleted while its watch was down]
	// Added       configmaps  demo/e  rv=226  [RELIST]
}
