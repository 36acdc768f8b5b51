// Package printer turns watch events into lines: human text or NDJSON (docs/json.md). It never
// talks to the API.
package printer

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Options says how events are printed.
type Options struct {
	// Output is the -o format (OutputFormat.Validate checks it).
	Output        OutputFormat
	Color         bool
	ShowBookmarks bool
	ShowSecrets   bool
	// ShowReconciles prints Reconciled lines in human output (always in JSON unless
	// OmitReconciles).
	ShowReconciles bool
	// ShowAPIStats prints the ApiStats lines at exit (Final) in human output; periodic ones
	// (--api-stats) are always printed, and machine-readable output always has them.
	ShowAPIStats bool
	// QueueColumn adds the simulated workqueue's depth (`queue=N`) to human object lines: for
	// runs that simulate workers; otherwise the number reads as the user's controller's.
	QueueColumn bool
	// OmitReconciles leaves the Reconciled lines out of machine-readable output too (a watch
	// that simulates no workers).
	OmitReconciles bool
	// FlushEach flushes after every event, so `| grep` and terminals see lines live.
	FlushEach     bool
	PluginVersion string
	// Diff is "" (off), "inline" (the changed fields of every update) or "full" (also a unified
	// YAML diff of the object).
	Diff string
	// Timestamps is the human time column: "" or "absolute" (wall clock), "relative" (since
	// the first event), "none".
	Timestamps string
	// NoHeaders drops the `#` header line of human output.
	NoHeaders bool
	// ErrOut receives template execution errors (one line per failing event; the stream goes
	// on). Without it, Print returns them.
	ErrOut io.Writer
}

// Printer writes events to one writer. It is used from one goroutine (Prepare excepted).
type Printer struct {
	opts  Options
	w     *bufio.Writer
	out   outputKind
	tmpl  printers.ResourcePrinter
	err   error     // a bad Output: returned by every Print
	start time.Time // the first event's time, for relative timestamps
	// resWidth is the width of the resource column: the longest of the watched resources (from
	// the Informer line), so lines of several resources align.
	resWidth int
	// readers read objects' states, one per resource and version (state.go).
	readers readerCache
	// now is the clock PrepareAdded reads states with (a test's fixed one).
	now func() time.Time
	// templateFailures counts events the -o template failed on (said on ErrOut one by one).
	templateFailures atomic.Int64
	// prepared is the object Prepare encoded of the line PrintPrepared prints; nil otherwise.
	prepared []byte
	// preparedState is the state Lighten read of the line PrintPrepared prints, when
	// hasPreparedState (held by value: a pointer to the Prepared would move each to the heap).
	preparedState    objectState
	hasPreparedState bool
	// light is Lighten's own state readers: it runs on another goroutine than Print.
	light lightReaders
	// progress is the progress line WriteOut erases first (ClearsFirst); nil: none.
	progress *ProgressLine
}

// TemplateFailures is how many events the -o jsonpath / go-template template failed on: the
// command exits non-zero when any did, as kubectl does when its template fails.
func (p *Printer) TemplateFailures() int64 { return p.templateFailures.Load() }

// New returns a Printer writing to w.
func New(w io.Writer, opts Options) *Printer {
	p := &Printer{opts: opts, w: bufio.NewWriterSize(w, 64*1024), now: time.Now}
	p.out, p.tmpl, p.err = parseOutput(opts.Output)
	return p
}

// Print writes one event (or nothing, for events the human output leaves out).
func (p *Printer) Print(ev *watch.Event) error {
	if p.err != nil {
		return p.err
	}
	if p.start.IsZero() {
		p.start = ev.Time
	}
	var err error
	switch p.out {
	case outputJSON:
		err = p.writeJSON(ev)
	case outputYAML:
		err = p.writeYAML(ev)
	case outputTemplate:
		err = p.writeTemplate(ev)
	default:
		err = p.writeHuman(ev)
	}
	if err != nil {
		return err
	}
	if p.opts.FlushEach {
		return p.w.Flush()
	}
	return nil
}

// Flush writes out anything buffered.
func (p *Printer) Flush() error { return p.w.Flush() }

const (
	colorReset  = "\x1b[0m"
	colorRed    = "\x1b[31m"
	colorGreen  = "\x1b[32m"
	colorYellow = "\x1b[33m"
	colorBlue   = "\x1b[34m"
	colorMagent = "\x1b[35m"
	colorCyan   = "\x1b[36m"
	colorDim    = "\x1b[2m"
)

func typeColor(t watch.Type) string {
	switch t {
	case watch.Added:
		return colorGreen
	case watch.Updated:
		return colorYellow
	case watch.Deleted:
		return colorRed
	case watch.Error, watch.WatchClosed:
		return colorMagent
	case watch.Relist, watch.Resync:
		return colorCyan
	case watch.KubeEvent:
		return colorDim
	case watch.HotLoop:
		return colorRed
	}
	return colorBlue
}

func (p *Printer) paint(color, s string) string {
	if !p.opts.Color || color == "" {
		return s
	}
	return color + s + colorReset
}

func (p *Printer) writeHuman(ev *watch.Event) error {
	if ev.Type == watch.Informer {
		return p.writeHeader(ev)
	}
	if ev.Type == watch.Bookmark && !p.opts.ShowBookmarks {
		return nil
	}
	if ev.Type == watch.Reconciled && !p.opts.ShowReconciles {
		return nil
	}
	if ev.Type == watch.ApiStats && ev.Stats.Final && !p.opts.ShowAPIStats {
		return nil
	}
	var b strings.Builder
	if ts := p.timeColumn(ev.Time); ts != "" {
		b.WriteString(p.paint(colorDim, ts))
		b.WriteString("  ")
	}
	color := typeColor(ev.Type)
	if ev.Type == watch.KubeEvent && ev.Kube != nil && ev.Kube.EventType == "Warning" {
		color = colorRed
	}
	b.WriteString(p.paint(color, fmt.Sprintf("%-11s", Escape(string(ev.Type)))))
	b.WriteString(" ")
	if ev.Type == watch.ControllerQueue {
		p.controllerQueueDetail(&b, ev)
		b.WriteByte('\n')
		_, err := p.w.WriteString(b.String())
		return err
	}
	res := Escape(ev.Resource.String())
	b.WriteString(res)
	b.WriteString("  ")
	if pad := p.resWidth - utf8.RuneCountInString(res); pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	var block []string
	switch {
	case ev.Type.IsObject():
		block = p.objectDetail(&b, ev)
	case ev.Type == watch.HotLoop:
		p.hotLoopDetail(&b, ev)
	case ev.Type == watch.HotLoopEnded:
		p.hotLoopEndedDetail(&b, ev)
	case ev.Type == watch.KubeEvent:
		p.kubeEventDetail(&b, ev)
	case ev.Type == watch.Folded:
		p.foldedDetail(&b, ev)
	case ev.Type == watch.ControllerReconcile:
		p.controllerReconcileDetail(&b, ev)
	default:
		p.lifecycleDetail(&b, ev)
	}
	b.WriteByte('\n')
	for _, l := range block {
		b.WriteString(blockIndent)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err := p.w.WriteString(b.String())
	return err
}

// blockIndent starts the lines printed under an event's line (a longer diff).
const blockIndent = "    "

// timeColumn is the human time column, or "" with --timestamps=none.
func (p *Printer) timeColumn(t time.Time) string {
	switch p.opts.Timestamps {
	case "none":
		return ""
	case "relative":
		return fmt.Sprintf("%12s", fmt.Sprintf("%+.3fs", t.Sub(p.start).Seconds()))
	}
	return t.Local().Format("15:04:05.000")
}

// objectDetail writes an object event's line and returns the lines to print under it.
func (p *Printer) objectDetail(b *strings.Builder, ev *watch.Event) []string {
	if ev.Namespace != "" { // escaped apart: Escape works a character at a time
		b.WriteString(Escape(ev.Namespace))
		b.WriteByte('/')
	}
	b.WriteString(Escape(ev.Name))
	writeOwners(b, ev.Obj.Owners)
	b.WriteString("  rv=")
	switch {
	case ev.Type == watch.Updated && ev.Obj.OldResourceVersion == ev.ResourceVersion:
		b.WriteString(Escape(ev.ResourceVersion) + " (unchanged)")
	case ev.Type == watch.Updated:
		b.WriteString(Escape(ev.Obj.OldResourceVersion) + "→" + Escape(ev.ResourceVersion))
	default:
		b.WriteString(Escape(ev.ResourceVersion))
	}
	if ev.Obj.Queue != nil && p.opts.QueueColumn {
		fmt.Fprintf(b, "  queue=%d", ev.Obj.Queue.Depth)
	}
	p.writeState(b, p.stateOf(ev))
	if p.out == outputWide {
		p.wideDetail(b, ev)
	}
	if s := eventSummary(ev); s != "" {
		b.WriteString("  ")
		b.WriteString(s)
	}
	u := p.updateOf(ev)
	named := u != nil && len(u.attribution.Managers) > 0
	switch {
	case u != nil:
		p.writeAttribution(b, u.attribution)
	case ev.Type == watch.Deleted && ev.Obj.Attribution != nil && ev.Obj.Attribution.Reconcile != nil:
		// Deleted by a controller whose log shows the reconcile that deleted it.
		b.WriteString("  deleted")
		writeReconcileRef(b, *ev.Obj.Attribution.Reconcile)
		named = true
	}
	writeAudit(b, ev.Obj.Audit, named)
	var tags []string
	switch {
	case ev.Obj.Tombstone:
		tags = append(tags, p.paint(colorRed, "[TOMBSTONE: gone when the informer relisted; deleted while its watch was down]"))
	case ev.Obj.Delta == watch.DeltaSync:
		tags = append(tags, p.paint(colorCyan, "[RESYNC: cached copy redelivered, nothing changed on the server]"))
	case ev.Obj.Delta == watch.DeltaReplaced && ev.Obj.InitialList:
		tags = append(tags, p.paint(colorDim, "[initial list]"))
	case ev.Obj.Delta == watch.DeltaReplaced:
		tags = append(tags, p.paint(colorCyan, "[RELIST]"))
	}
	if ev.Obj.Filtered != "" {
		tags = append(tags, p.paint(colorDim, "[filtered by --predicate "+Escape(ev.Obj.Filtered)+": not enqueued]"))
	}
	for _, t := range tags {
		b.WriteString("  ")
		b.WriteString(t)
	}
	if ev.Obj.Folded > 0 {
		word := "updates"
		if ev.Obj.Folded == 1 {
			word = "update"
		}
		fmt.Fprintf(b, "  (+%d earlier %s of this object not shown: the output did not keep up)", ev.Obj.Folded, word)
	}
	if u == nil || p.opts.Diff == "" {
		return nil
	}
	inline, block := p.humanChanges(u)
	if inline != "" {
		b.WriteString("  ")
		b.WriteString(inline)
	}
	return block
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// writeReconcileRef writes " by C (its reconcile ID, from its log)", naming the reconciled
// object when it is another one (the owner whose reconcile deleted this one).
func writeReconcileRef(b *strings.Builder, r diff.ReconcileRef) {
	b.WriteString(" by " + Escape(r.Controller))
	of := ""
	if r.Name != "" {
		of = " of " + Escape(r.Kind) + " "
		if r.Namespace != "" {
			of += Escape(r.Namespace) + "/"
		}
		of += Escape(r.Name)
		of = strings.Replace(of, " of  ", " of ", 1) // no kind known
	}
	if id := shortReconcileID(r.ReconcileID); id != "" {
		b.WriteString(" (its reconcile " + Escape(id) + of + ", from its log)")
	} else {
		b.WriteString(" (one of its reconciles" + of + ", from its log)")
	}
}

// writeAttribution writes who made an update: "  by X (Update)" when X's managedFields entry
// moved; "  by X (Update status; owns the changed fields)" when only ownership tells (several:
// "by one of X, Y (...)"); "  no-op write" for an update that changed nothing; what happened
// for the writes that record no manager (a binding, a DELETE).
func (p *Printer) writeAttribution(b *strings.Builder, a diff.Attribution) {
	switch {
	case a.Rule == diff.RuleReconcile && a.Reconcile != nil:
		// Named by the controller's log, not by managedFields: the line says so.
		if a.NoOp {
			b.WriteString("  no-op write")
		}
		b.WriteByte(' ')
		writeReconcileRef(b, *a.Reconcile)
		return
	case a.Rule == diff.RuleDelete && a.Reconcile != nil:
		b.WriteString("  deletion requested (DELETE)")
		writeReconcileRef(b, *a.Reconcile)
		return
	case a.NoOp:
		b.WriteString("  no-op write")
		return
	case a.Rule == diff.RuleBinding:
		b.WriteString("  bound (pods/binding)")
		return
	case a.Rule == diff.RuleDelete:
		b.WriteString("  deletion requested (DELETE)")
		return
	}
	if len(a.Managers) == 0 {
		return
	}
	b.WriteString("  by ")
	if a.Rule == diff.RuleOwnership && len(a.Managers) > 1 {
		b.WriteString("one of ")
	}
	for i, m := range a.Managers {
		if i > 0 {
			b.WriteString(", ")
		}
		s := m.String()
		if a.Rule == diff.RuleOwnership && i == len(a.Managers)-1 {
			s = strings.TrimSuffix(s, ")") + "; owns the changed fields)"
		}
		b.WriteString(Escape(s))
	}
}

// writeAudit writes who made the line's write by the audit log: "  by alice" where no field
// manager is named (creates, deletes), "  user=alice" beside one; "(as alice)" for an
// impersonation, "(audit, by time)" when only the time matched it.
func writeAudit(b *strings.Builder, a *watch.AuditInfo, managed bool) {
	if a == nil {
		return
	}
	if managed {
		b.WriteString("  user=")
	} else {
		b.WriteString("  by ")
	}
	b.WriteString(Escape(a.User))
	if a.ImpersonatedUser != "" {
		b.WriteString(" (as " + Escape(a.ImpersonatedUser) + ")")
	}
	switch a.Matched {
	case watch.AuditByTime:
		b.WriteString(" (audit, by time)")
	case watch.AuditByCollection:
		b.WriteString(" (deletecollection)")
	}
}

// eventSummary is what an Event object (core/v1 or events.k8s.io/v1) says, for its line:
// `Normal ScalingReplicaSet: Scaled up replica set web-5fc9 to 3 (Deployment/web, x3)`.
func eventSummary(ev *watch.Event) string {
	if !isEventsResource(ev.Resource) || ev.Materialize() == nil {
		return ""
	}
	o := ev.Obj.Object.Object
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	msg := str(o, "note")
	if msg == "" {
		msg = str(o, "message")
	}
	ref, _ := o["regarding"].(map[string]any)
	if ref == nil {
		ref, _ = o["involvedObject"].(map[string]any)
	}
	s := strings.TrimSpace(str(o, "type") + " " + str(o, "reason"))
	if msg != "" {
		s += ": " + strings.TrimSpace(msg)
	}
	var about []string
	if ref != nil {
		about = append(about, str(ref, "kind")+"/"+str(ref, "name"))
	}
	count := o["count"]
	if series, _ := o["series"].(map[string]any); series != nil {
		count = series["count"]
	}
	if n, ok := count.(int64); ok && n > 1 {
		about = append(about, fmt.Sprintf("x%d", n))
	} else if f, ok := count.(float64); ok && f > 1 {
		about = append(about, fmt.Sprintf("x%d", int64(f)))
	}
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return Escape(s)
}

// triggerSummary says what a reconcile ran for: the events that coalesced into it (the first
// and the newest when there are many) and a requeue after a failure.
func triggerSummary(ev *watch.Event) string {
	var parts []string
	if ev.Queued.Requeue {
		parts = append(parts, "requeued after a failed reconcile")
	}
	if ev.Queued.TriggerCount > 0 {
		ts := ev.Queued.Triggers
		var shown []string
		for i, t := range ts {
			if len(ts) > 3 && i > 0 && i < len(ts)-1 {
				if i == 1 {
					shown = append(shown, fmt.Sprintf("… %d more …", ev.Queued.TriggerCount-2))
				}
				continue
			}
			s := string(t.Type)
			if t.Delta == watch.DeltaSync {
				s = string(watch.DeltaSync) // a resync redelivered the cached object: no change
			}
			if t.Key != "" { // an owned object's event, which enqueued its owner
				s += " of " + Escape(t.Resource+" "+t.Key)
			}
			s += " rv=" + Escape(t.ResourceVersion)
			switch {
			case len(t.Managers) > 0 && t.Attribution == diff.RuleReconcile:
				s += " (by " + Escape(strings.Join(t.Managers, ", ")) + "'s reconcile, from its log)"
			case len(t.Managers) > 1 && t.Attribution == diff.RuleOwnership:
				s += " (by one of " + Escape(strings.Join(t.Managers, ", ")) + ")"
			case len(t.Managers) > 0:
				s += " (by " + Escape(strings.Join(t.Managers, ", ")) + ")"
			}
			shown = append(shown, s)
		}
		if len(ts) < ev.Queued.TriggerCount && len(ts) <= 3 {
			shown = append(shown, fmt.Sprintf("… %d more", ev.Queued.TriggerCount-len(ts)))
		}
		if ev.Queued.TriggerCount == 1 {
			parts = append(parts, "trigger: "+strings.Join(shown, ", "))
		} else {
			parts = append(parts, fmt.Sprintf("%d events coalesced: %s", ev.Queued.TriggerCount, strings.Join(shown, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}
