package printer

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/state"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// objectState is the state an object event's line shows: the object's, and the old object's
// when an update changed it.
type objectState struct {
	cur *state.State
	// prev is the old object's state on an Updated line whose status or summary differs from
	// cur's; nil otherwise.
	prev *state.State
}

// readerCache holds the state readers of resources, one per resource and version (a custom
// resource's printer columns are compiled when it is made). Not safe for concurrent use.
type readerCache map[string]*state.Reader

// of returns res's reader, made on first use.
func (c *readerCache) of(res discovery.Resource) *state.Reader {
	key := res.String() + "/" + res.Version
	r, ok := (*c)[key]
	if !ok {
		if *c == nil {
			*c = readerCache{}
		}
		r = state.NewReader(res.PrinterColumns)
		(*c)[key] = r
	}
	return r
}

// reader returns the state reader of a resource, Print's own.
func (p *Printer) reader(res discovery.Resource) *state.Reader { return p.readers.of(res) }

// stateOf reads the state of an object event's object, and of its old object on an update
// (what Lighten read, when the line was lightened).
func (p *Printer) stateOf(ev *watch.Event) objectState {
	if p.hasPreparedState {
		return p.preparedState
	}
	return readState(p.reader(ev.Resource), ev)
}

// readState reads with r the state of an object event's object, and of its old object on an
// update: from their Go types when the line carries them (watch.Event.Obj.Typed, OldTyped: the
// same state as from the maps, without converting a map back to the Go type a kind's summary
// is read from), else from the maps.
func readState(r *state.Reader, ev *watch.Event) objectState {
	var s objectState
	if t := ev.TypedObject(); t != nil {
		s.cur = r.OfTyped(t, ev.Time)
	} else {
		s.cur = r.Of(ev.Obj.Object, ev.Time)
	}
	if s.cur == nil || ev.Type != watch.Updated {
		return s
	}
	var old *state.State
	switch {
	case ev.Obj.OldTyped != nil:
		old = r.OfTyped(ev.Obj.OldTyped, ev.Time)
	case ev.Obj.OldObject != nil:
		old = r.Of(ev.Obj.OldObject, ev.Time)
	}
	if old != nil && (old.Status != s.cur.Status || old.Summary != s.cur.Summary) {
		s.prev = old
	}
	return s
}

// lightReaders are the state readers of Lighten: a reader's compiled printer columns are not
// safe to share with Print's goroutine.
type lightReaders struct {
	mu      sync.Mutex
	readers readerCache
}

// Lighten reads ahead, from a typed line's Go objects, the state its line shows, and drops them
// from ev (Typed, OldTyped) when the line needs nothing else of them: always when the line
// carries its maps too (an update or a delete: the maps are what every output renders, the Go
// types are there for the state); for an Added line carried typed only, in human output (not
// wide, whose columns read the object), not of Events (whose line reads the object's message).
// The decoded objects (a ConfigMap's ~2 KB, a pod's ~6 KB) were most of the memory of a line
// waiting for the writer: through a large initial list a few thousand lines wait, and -o json
// keeps up to --output-buffer lines when its reader is slow. It reads the printer's options and
// readers of its own, so any goroutine may call it, concurrently with Print; ev must not change
// until it returns. PrintPrepared prints the line with it: the same bytes as Print(ev) before
// Lighten.
func (p *Printer) Lighten(ev *watch.Event) Prepared {
	if p.err != nil || !ev.Type.IsObject() || ev.Obj.Typed == nil {
		return Prepared{}
	}
	if ev.Obj.Object == nil && (p.out != outputHuman || isEventsResource(ev.Resource)) {
		return Prepared{}
	}
	p.light.mu.Lock()
	defer p.light.mu.Unlock()
	pr := Prepared{state: readState(p.light.readers.of(ev.Resource), ev), hasState: true}
	ev.Obj.Typed, ev.Obj.OldTyped = nil, nil
	return pr
}

// PrepareAdded makes the printer the informer's watch.AddedReader (watch.Config.Prepare): for
// a resource whose Added lines Lighten lightens (human output, not wide, not Events), a Preparer
// whose Reader reads, from an object as the informer decodes it for its line, what Lighten
// would: the state the line shows (the Prepared the line then carries, which the output hands to
// PrintPrepared), and what of the object that reads (Reads). A Preparer without Reader for other
// resources and outputs, whose Added lines need their objects. The state is read when the
// object is decoded (as its initial list is received, or a few hundred lines ahead of its line),
// and a state that depends on the time (a pod unschedulable for longer than kstatus' window) is
// read at that time.
func (p *Printer) PrepareAdded(res discovery.Resource) watch.Preparer {
	if p.err != nil || p.out != outputHuman || isEventsResource(res) {
		return watch.Preparer{}
	}
	pr := watch.Preparer{Reader: stateReader{p: p, res: res}}
	// The objects need no more of them decoded than the state reads.
	p.light.mu.Lock()
	metadata, spec, counted, ok := p.light.readers.of(res).Reads(res.GVK().GroupKind())
	p.light.mu.Unlock()
	if ok {
		pr.Reads = &watch.Reads{Metadata: metadata, Spec: spec, SpecCounted: counted}
	}
	return pr
}

// stateReader reads the state an Added line of res shows from its object, as Lighten would
// (watch.ObjectReader).
type stateReader struct {
	p   *Printer
	res discovery.Resource
}

func (r stateReader) ReadObject(o runtime.Object) watch.Prepared {
	ev := watch.Event{Type: watch.Added, Resource: r.res, Obj: watch.ObjectInfo{Typed: o}, Time: r.p.now()}
	pr := r.p.Lighten(&ev)
	switch {
	case !pr.hasState:
		return nil
	case pr.state == (objectState{}) && pr.object == nil:
		return preparedNoState
	}
	return pr
}

// preparedNoState is what ReadObject returns for an object whose state says nothing (a
// ConfigMap's): one value for all, where each would be an allocation of its own (20,000 of
// them held at once while an initial list's lines wait for it to end).
var preparedNoState watch.Prepared = Prepared{hasState: true}

// isEventsResource reports whether res is core/v1's or events.k8s.io's Events.
func isEventsResource(res discovery.Resource) bool {
	return res.Resource == "events" && (res.Group == "" || res.Group == "events.k8s.io")
}

func (s objectState) record() *recording.State {
	if s.cur == nil {
		return nil
	}
	r := &recording.State{Status: s.cur.Status, Summary: s.cur.Summary, Message: s.cur.Message, Finalizers: s.cur.Finalizers}
	if s.prev != nil {
		if s.prev.Status != s.cur.Status {
			r.Previous = s.prev.Status
		}
		if s.prev.Summary != s.cur.Summary {
			r.PreviousSummary = s.prev.Summary
		}
	}
	return r
}

func statusColor(status string) string {
	switch status {
	case state.Current:
		return colorGreen
	case state.InProgress:
		return colorYellow
	case state.Failed:
		return colorRed
	case state.Terminating:
		return colorMagent
	}
	return colorDim
}

// writeState writes the state on a human line: the status (`InProgress → Current` when an update
// changed it), what holds it or what is wrong when that matters, and the summary (`0/1 Pending →
// 1/1 Running`). -o wide adds the message of every status but Current.
func (p *Printer) writeState(b *strings.Builder, s objectState) {
	cur := s.cur
	if cur == nil {
		return
	}
	b.WriteString("  ")
	if s.prev != nil && s.prev.Status != cur.Status {
		b.WriteString(p.paint(statusColor(s.prev.Status), Escape(s.prev.Status)))
		b.WriteString(" → ")
	}
	b.WriteString(p.paint(statusColor(cur.Status), Escape(cur.Status)))
	if msg := p.stateMessage(cur); msg != "" {
		b.WriteString(" (" + Escape(msg) + ")")
	}
	if cur.Summary == "" {
		return
	}
	b.WriteString("  ")
	if s.prev != nil && s.prev.Summary != cur.Summary && s.prev.Summary != "" {
		b.WriteString(Escape(summaryTransition(s.prev.Summary, cur.Summary)))
		return
	}
	b.WriteString(Escape(cur.Summary))
}

// summaryTransition says how a summary changed, as short as stays clear: word by word when
// only some words changed (`1/3→2/3 ready, 3 updated, 1→2 available`, `0/1 Pending→Running`),
// whole otherwise (`0/1 Pending → 1/1 Running`).
func summaryTransition(old, cur string) string {
	ow, cw := strings.Split(old, " "), strings.Split(cur, " ")
	if len(ow) != len(cw) {
		return old + " → " + cur
	}
	changed := 0
	for i := range cw {
		if ow[i] != cw[i] {
			changed++
		}
	}
	if changed == len(cw) {
		return old + " → " + cur
	}
	out := make([]string, len(cw))
	for i := range cw {
		out[i] = cw[i]
		if ow[i] != cw[i] {
			// A word's punctuation stays after the arrow: "1,→2," reads worse than "1→2,".
			o, c := ow[i], cw[i]
			tail := ""
			for _, p := range []string{",", ";"} {
				if strings.HasSuffix(o, p) && strings.HasSuffix(c, p) {
					o, c, tail = strings.TrimSuffix(o, p), strings.TrimSuffix(c, p), p
				}
			}
			// And so does a column's name: "Ready=False→True".
			if k, ov, ok := strings.Cut(o, "="); ok {
				if ck, cv, ok := strings.Cut(c, "="); ok && ck == k {
					o, c = k+"="+ov, cv
				}
			}
			out[i] = o + "→" + c + tail
		}
	}
	return strings.Join(out, " ")
}

// stateMessage is the part of the message a human line shows: what holds a Terminating object,
// why it Failed, what kstatus could not read; for InProgress, only when no summary says more.
// -o wide shows it for every status but Current.
func (p *Printer) stateMessage(s *state.State) string {
	switch {
	case s.Message == "":
		return ""
	case s.Status == state.Terminating:
		return strings.TrimPrefix(strings.TrimPrefix(s.Message, "deletion requested"), "; ")
	case s.Status == state.Failed, s.Status == state.Unknown:
		return s.Message
	case s.Status == state.InProgress && (s.Summary == "" || p.out == outputWide):
		return s.Message
	}
	return ""
}

// kindColumns writes -o wide's columns of the object's kind: a pod's node and IP, a workload's
// images, a custom resource's printer columns of priority above 0.
func (p *Printer) kindColumns(b *strings.Builder, ev *watch.Event) {
	for _, f := range p.reader(ev.Resource).Wide(ev.Materialize()) {
		b.WriteString("  ")
		b.WriteString(Escape(f.Name + "=" + f.Value))
	}
}
