package ctrllog

import (
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/redact"
)

// Results of a reconcile, as ControllerReconcile lines say them.
const (
	ResultOK           = "ok"
	ResultError        = "error"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeueAfter"
	// ResultUnknown: the log showed the reconcile (lines with its reconcileID) but not how it
	// ended (controller-runtime says so only at verbosity 5, --zap-log-level=5).
	ResultUnknown = "unknown"
)

// Bounds of a reconcile: what its start and end are.
const (
	// BoundsLogged: the controller logged its start and its end ("Reconciling" and "Reconcile
	// successful" or "Reconciler error", controller-runtime at verbosity 5; a klog sync line
	// with its duration).
	BoundsLogged = "logged"
	// BoundsLines: its start and end are the first and last of its lines the log shows (a
	// controller logging at info): it began no later and ended no sooner.
	BoundsLines = "lines"
)

// Reconcile is one reconcile rebuilt from a controller's log.
type Reconcile struct {
	Controller  string
	Object      ObjectRef
	ReconcileID string
	// Start is when it began by the log's clock (its first line, or its end less the
	// duration it logged); End when it ended (its last line).
	Start, End time.Time
	// Duration is End-Start when the log says both (a start line and an end line, or a
	// logged duration); DurationKnown says so.
	Duration      time.Duration
	DurationKnown bool
	// Precise: the timestamps have sub-second digits.
	Precise      bool
	Result       string
	Error        string
	RequeueAfter time.Duration
	// Bounds says whether Start and End are the ones the controller logged (BoundsLogged) or
	// its first and last lines seen (BoundsLines).
	Bounds string
	// Lines is how many lines of the log it is made of.
	Lines  int
	Format Format
	// Source names the log (the file, "-" for stdin).
	Source string
	// Read is when this machine read its first line, LastRead its last.
	Read, LastRead time.Time
	// UntrustedTime: a line's timestamp (or a start its logged duration gave) was not trusted
	// (trusted): when that line was read stands for it.
	UntrustedTime bool
	// Deleted are the names its lines that speak of a delete ("deployment deleted",
	// "deleting pod") give as values: the objects it says it deleted (at most maxDeleted).
	Deleted []string
}

// maxDeleted bounds the names a reconcile's delete lines give that are kept.
const maxDeleted = 16

// ownKeys are the keys controller-runtime gives every line of a reconcile: the reconcile and its
// object, not what a line speaks of.
var ownKeys = []string{"reconcileID", "controller", "controllerGroup", "controllerKind", "logger", "name", "namespace", "msg", "message", "level", "ts", "time", "caller"}

// noteDeleted keeps what a line that says it deleted something names, as "kind/name" and
// "kind/namespace/name": the kind is the key the name is given under, as controllers log an
// object (`"deployment": "shop"`, controller-runtime's `"Service": {"name": ..., "namespace":
// ...}`), lower-cased. A line that says it did not delete (failed, skipped, not deleting, an
// error line), the keys every reconcile line carries, and the reconciled object itself (removing
// its finalizer ends a delete someone else asked for) are left out.
func (rec *Reconcile) noteDeleted(l *Line) {
	if !saysDeleted(l) {
		return
	}
	add := func(kind, ns, name string) {
		// The reconciled object itself: its kind (a kind the log does not say: any kind) and name.
		own := (rec.Object.Kind == "" || strings.EqualFold(kind, rec.Object.Kind)) && name == rec.Object.Name && (ns == "" || ns == rec.Object.Namespace)
		if name == "" || len(name) > maxName || len(ns) > maxName || own {
			return
		}
		vs := []string{kind + "/" + name}
		if ns != "" {
			vs = append(vs, kind+"/"+ns+"/"+name)
		}
		for _, v := range vs {
			if v = clean(v); len(rec.Deleted) < maxDeleted && !slices.Contains(rec.Deleted, v) {
				rec.Deleted = append(rec.Deleted, v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(l.Fields)) {
		kind := strings.ToLower(k)
		switch v := l.Fields[k].(type) {
		case string:
			if !slices.Contains(ownKeys, k) {
				ns, name, ok := strings.Cut(v, "/") // klog's "namespace/name"
				if !ok {
					ns, name = "", v
				}
				add(kind, ns, name)
			}
		case map[string]any:
			n, _ := v["name"].(string)
			ns, _ := v["namespace"].(string)
			add(kind, ns, n)
		}
	}
}

// maxName bounds a name a delete line gives that is kept (a namespace/name is at most 317
// bytes): a longer value names no object.
const maxName = 317

// saysDeleted reports whether a line says its reconcile deleted something: "deleted",
// "deleting", "delete ..." in a line that is no error and says neither that it failed nor that
// it did not or will not.
func saysDeleted(l *Line) bool {
	if l.Error {
		return false
	}
	msg := strings.ToLower(l.Msg)
	if !strings.Contains(msg, "delet") {
		return false
	}
	for _, no := range []string{"fail", "not ", "n't", "skip", "unable", "error", "cannot", "won't", "without"} {
		if strings.Contains(msg, no) {
			return false
		}
	}
	return true
}

// Bounds of a log's times that are trusted: no later than maxAhead after the line was read (a
// pod's clock ahead of this machine's by more is broken, and one such line would hold every
// later event of its object for a reconcile that never ran then), and not before the Unix epoch
// (no controller logged then; a number out of range lands there).
const maxAhead = time.Hour

var minTime = time.Unix(0, 0)

// trusted reports whether a log's time t, read at read, is one the join can use.
func trusted(t, read time.Time) bool { return !t.Before(minTime) && !t.After(read.Add(maxAhead)) }

// clean masks the credentials in a text taken from a log (internal/redact), as every output does.
func clean(s string) string { return redact.Text(s) }

func cleanRef(o ObjectRef) ObjectRef {
	return ObjectRef{Kind: clean(o.Kind), Namespace: clean(o.Namespace), Name: clean(o.Name)}
}

// Stats counts what a log held.
type Stats struct {
	Lines      int            // every line read
	ByFormat   map[Format]int // lines parsed, by format
	Other      int            // lines in no format (stack traces, panics, plain text)
	Reconciles int            // reconciles rebuilt
	// UntrustedTimes counts the lines whose timestamp was not trusted (the read time stood for it).
	UntrustedTimes int
	// NoObject: reconciles (lines with a reconcileID) none of whose lines names an object;
	// NoObjectBy counts them by controller (a singleton controller's, such as Karpenter's
	// provisioner).
	NoObject   int
	NoObjectBy map[string]int
	// EndedEarly counts the reconciles closed before their log went quiet, because MaxOpen
	// reconciles were open at once: their end is not known.
	EndedEarly int
}

// MaxOpen bounds the reconciles open at once (lines with a reconcileID and no end line yet):
// a log of endless distinct reconcileIDs read faster than they go quiet closes one, without its
// end, for each new one beyond it (Stats.EndedEarly).
const MaxOpen = 65536

// syncMerge is how close an "Error syncing" line must follow a "Finished syncing" line of the
// same object (by the log's clock) to be the same sync (kube-controller-manager logs both).
const syncMerge = time.Second

// Reconstructor rebuilds reconciles from one log's lines, in the order they were written. Not
// safe for concurrent use.
type Reconstructor struct {
	Source string
	// Year of klog text lines (their header has none); default: this year.
	Year int
	// Keys are the keys --controller-log-keys names (nil: found by themselves).
	Keys  *Keys
	Stats Stats
	diag  diagnosis

	open    map[string]*Reconcile // by reconcileID
	lastIn  map[string]time.Time  // reconcileID -> when its last line was read
	pending map[string]*Reconcile // klog syncs by controller+object, for a following error line
	// newest is the log's newest line's time, by its own clock: a reconcile whose end was not
	// logged is over when the log has moved on past it, not only when this machine read nothing
	// of it for a while (a loaded machine reads a log late: two lines 0.4 s apart can be read
	// more than a second apart).
	newest time.Time
}

// quietIdle is how long a reconcile whose end was not logged stays open while its log says
// nothing newer at all (a quiet log, or one read late): beyond it, it is over.
const quietIdle = 3 * time.Second

// NewReconstructor returns a reconstructor for the log named source.
func NewReconstructor(source string) *Reconstructor {
	return &Reconstructor{Source: source, Year: time.Now().Year(), Stats: Stats{ByFormat: map[Format]int{}, NoObjectBy: map[string]int{}},
		open: map[string]*Reconcile{}, lastIn: map[string]time.Time{}, pending: map[string]*Reconcile{}}
}

// Feed reads one line, read at now, and returns the reconciles it completes.
func (r *Reconstructor) Feed(b []byte, now time.Time) []Reconcile {
	r.Stats.Lines++
	l, ok := parseLine(b, r.Year, r.Keys)
	r.diag.note(&l, ok, b, now)
	if !ok {
		r.Stats.Other++
		return nil
	}
	r.Stats.ByFormat[l.Format]++
	untrusted := !trusted(l.Time, now)
	if untrusted {
		r.Stats.UntrustedTimes++
		l.Time, l.Precise = now, true
	}
	if !untrusted && l.Time.After(r.newest) { // a read time standing for a line's is not the log's clock
		r.newest = l.Time
	}
	kind, hint := classify(&l)
	switch kind {
	case kindOther, kindSyncStart:
		return nil
	case kindSynced, kindFinished, kindSyncError:
		return r.sync(&l, kind, hint, now, untrusted)
	}
	id := l.Str("reconcileID")
	rec := r.open[id]
	var early []Reconcile
	if rec == nil && len(r.open) >= MaxOpen {
		for old := range r.open {
			r.Stats.EndedEarly++
			if rc, ok := r.close(old, false); ok {
				early = append(early, rc)
			}
			break
		}
	}
	if rec == nil {
		obj, _ := objectOf(&l, "")
		rec = &Reconcile{Controller: clean(l.Str("controller")), Object: cleanRef(obj), ReconcileID: clean(id), Start: l.Time, End: l.Time,
			Precise: l.Precise, Format: l.Format, Source: r.Source, Read: now, Result: ResultUnknown}
		r.open[id] = rec
	}
	rec.Lines++
	rec.noteDeleted(&l)
	rec.End, rec.LastRead = l.Time, now
	rec.UntrustedTime = rec.UntrustedTime || untrusted
	r.lastIn[id] = now
	switch kind {
	case kindStart:
		rec.DurationKnown = true // its start is the start
		return early
	case kindInReconcile:
		if l.Error {
			// Below verbosity 5 its error lines are all the log says of how it ended; a
			// "Reconcile successful" after them still makes it ok.
			rec.Result = ResultError
			if rec.Error == "" {
				rec.Error = errorText(&l)
				if rec.Error == "" {
					rec.Error = clean(l.Msg)
				}
			}
		}
		return early
	case kindOK:
		rec.Result = ResultOK
	case kindError:
		rec.Result, rec.Error = ResultError, errorText(&l)
	case kindRequeue:
		rec.Result = ResultRequeue
	case kindRequeueAfter:
		rec.Result, rec.RequeueAfter = ResultRequeueAfter, requeueAfter(l.Msg)
	}
	if rc, ok := r.close(id, true); ok {
		return append(early, rc)
	}
	return early
}

// close ends the open reconcile id: by its end line (ended), or as its log went quiet. A
// reconcile none of whose lines names its object (a singleton controller's) is only counted
// (Stats.NoObject): it cannot be joined to the watch.
func (r *Reconstructor) close(id string, ended bool) (Reconcile, bool) {
	rec := r.open[id]
	delete(r.open, id)
	delete(r.lastIn, id)
	rec.Bounds = BoundsLines
	if !ended {
		// Its start line may have been logged, its end was not: the duration is not known.
		rec.DurationKnown = false
	}
	if rec.DurationKnown {
		rec.Duration = rec.End.Sub(rec.Start)
		rec.Bounds = BoundsLogged
	}
	if rec.Object.Name == "" {
		r.Stats.NoObject++
		r.Stats.NoObjectBy[rec.Controller]++
		return Reconcile{}, false
	}
	r.Stats.Reconciles++
	return *rec, true
}

// sync makes one reconcile of a klog controller's "synced" or "error syncing" line.
func (r *Reconstructor) sync(l *Line, kind lineKind, hint string, now time.Time, untrusted bool) []Reconcile {
	obj, ok := objectOf(l, hint)
	if !ok {
		return nil
	}
	obj = cleanRef(obj)
	// The controller: its logger's name (kube-controller-manager's "deployment-controller"),
	// else the kind its message names, else the object's, else the log's name (a
	// sample-controller logs with no name). utilruntime.HandleError's logger names no one.
	controller := l.Logger
	if controller == "UnhandledError" {
		controller = ""
	}
	if controller == "" {
		controller = hint
	}
	if controller == "" {
		controller = strings.ToLower(obj.Kind)
	}
	if controller == "" {
		controller = strings.TrimSuffix(filepath.Base(r.Source), filepath.Ext(r.Source))
	}
	controller = clean(controller)
	key := controller + "\x00" + obj.Kind + "\x00" + obj.Key()
	var out []Reconcile
	if kind == kindSyncError {
		if p := r.pending[key]; p != nil && l.Time.Sub(p.End) <= syncMerge {
			// kube-controller-manager: "Finished syncing" (deferred) and then "Error syncing":
			// one sync that failed.
			delete(r.pending, key)
			p.Result, p.Error = ResultError, errorText(l)
			p.Lines++
			p.LastRead = now
			p.UntrustedTime = p.UntrustedTime || untrusted
			r.Stats.Reconciles++
			return []Reconcile{*p}
		}
	}
	if p := r.pending[key]; p != nil {
		delete(r.pending, key)
		r.Stats.Reconciles++
		out = append(out, *p)
	}
	rec := &Reconcile{Controller: controller, Object: obj, Start: l.Time, End: l.Time, Precise: l.Precise,
		Format: l.Format, Source: r.Source, Read: now, LastRead: now, Lines: 1, Result: ResultOK, UntrustedTime: untrusted, Bounds: BoundsLines}
	if d, ok := durationOf(l); ok {
		if start := l.Time.Add(-d); d >= 0 && trusted(start, now) {
			rec.Duration, rec.DurationKnown, rec.Start, rec.Bounds = d, true, start, BoundsLogged
		} else {
			rec.UntrustedTime = true // a duration no sync took: its start is not known
		}
	}
	if kind == kindSyncError {
		rec.Result, rec.Error = ResultError, errorText(l)
	}
	if kind != kindFinished {
		// Only a deferred "Finished syncing" line may be followed by its sync's error.
		r.Stats.Reconciles++
		return append(out, *rec)
	}
	r.pending[key] = rec
	return out
}

// Due returns the reconciles that are over by now: an open reconcile with no line read for idle
// (its end was not logged) once its log has a line idle newer than its last by the log's clock,
// or with none read for quietIdle; a sync no error line followed within a second.
func (r *Reconstructor) Due(now time.Time, idle time.Duration) []Reconcile {
	var out []Reconcile
	for id, last := range r.lastIn {
		rec := r.open[id]
		movedOn := rec == nil || r.newest.Sub(rec.End) >= idle
		if now.Sub(last) >= idle && (movedOn || now.Sub(last) >= max(idle, quietIdle)) {
			if rc, ok := r.close(id, false); ok {
				out = append(out, rc)
			}
		}
	}
	for key, p := range r.pending {
		if now.Sub(p.Read) >= syncMerge {
			delete(r.pending, key)
			r.Stats.Reconciles++
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Open calls fn with each reconcile still open (its end not read yet).
func (r *Reconstructor) Open(fn func(*Reconcile)) {
	for _, rec := range r.open {
		fn(rec)
	}
}

// Flush returns every reconcile still open (the log ended).
func (r *Reconstructor) Flush() []Reconcile {
	return r.Due(time.Now().Add(1000*time.Hour), 0)
}
