package ctrllog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name, in string
		want     Keys
		wantErr  string
	}{
		{"several", "message=msg,time=@timestamp,level=severity", Keys{Message: "msg", Time: "@timestamp", Level: "severity"}, ""},
		{"case of the part, spaces", " ReconcileID = rid , name=object_name", Keys{ReconcileID: "rid", Name: "object_name"}, ""},
		{"every part", "message=a,level=b,time=c,logger=d,controller=e,reconcileID=f,namespace=g,name=h,kind=i,error=j",
			Keys{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, ""},
		{"unknown part", "msg=message", Keys{}, `unknown part "msg": want one of message, level, time, logger, controller, reconcileID, namespace, name, kind, error`},
		{"no key", "message=", Keys{}, "message= names no key"},
		{"not a pair", "message", Keys{}, `"message" is not PART=KEY (e.g. message=msg)`},
		{"twice", "time=ts,Time=t", Keys{}, "time is named twice"},
		{"empty", " , ", Keys{}, "names no key: want PART=KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKeys(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("%+v, %v; want %+v", got, err, tt.want)
			}
			if again, err := ParseKeys(got.String()); err != nil || again != got {
				t.Errorf("String %q does not read back: %+v, %v", got.String(), again, err)
			}
		})
	}
}

// The lines of loggers configured every way operators ship them: the message, level, time,
// logger and reconcileID are found under each one's keys.
func TestStructuredLines(t *testing.T) {
	at := time.Date(2026, 11, 25, 3, 27, 20, 123000000, time.UTC)
	tests := []struct {
		name, line string
		keys       *Keys
		format     Format
		msg        string
		isErr      bool
		time       time.Time
		logger, id string
	}{
		{"zap production, message and upper-case levels", `{"level":"INFO","time":"2026-11-25T03:27:20.123Z","logger":"controller.nodeclaim","message":"launched nodeclaim","controller":"nodeclaim","reconcileID":"r1"}`,
			nil, FormatJSON, "launched nodeclaim", false, at, "controller.nodeclaim", "r1"},
		{"zap production, ERROR", `{"level":"ERROR","time":"2026-11-25T03:27:20.123Z","message":"Reconciler error","reconcileID":"r1","error":"boom"}`,
			nil, FormatJSON, "Reconciler error", true, at, "", "r1"},
		{"zap lower-case levels, msg, epoch ts", `{"level":"error","ts":1795577240.123,"msg":"x","reconcileID":"r1"}`,
			nil, FormatZapJSON, "x", true, at, "", "r1"},
		{"pino numbers, epoch milliseconds", `{"level":50,"time":1795577240123,"msg":"x","reconcile_id":"r2"}`,
			nil, FormatJSON, "x", true, at, "", "r2"},
		{"pino info", `{"level":30,"time":1795577240123,"msg":"x"}`, nil, FormatJSON, "x", false, at, "", ""},
		{"timestamp, severity", `{"severity":"Error","timestamp":"2026-11-25T03:27:20.123Z","message":"x","reconcileId":"r3"}`,
			nil, FormatJSON, "x", true, at, "", "r3"},
		{"ECS", `{"@timestamp":"2026-11-25T03:27:20.123Z","log.level":"warn","message":"x","log.logger":"op"}`,
			nil, FormatJSON, "x", false, at, "op", ""},
		{"keys named (Serilog's compact JSON)", `{"@t":"2026-11-25T03:27:20.123Z","@mt":"x","@l":"Error","rid":"r4","ctl":"widget"}`,
			&Keys{Message: "@mt", Time: "@t", Level: "@l", ReconcileID: "rid", Controller: "ctl"}, FormatJSON, "x", true, at, "", "r4"},
		{"nested key named", `{"t":"2026-11-25T03:27:20.123Z","m":"x","log":{"level":"ERROR"}}`,
			&Keys{Message: "m", Time: "t", Level: "log.level"}, FormatJSON, "x", true, at, "", ""},
		{"logfmt (logrus)", `time="2026-11-25T03:27:20.123Z" level=error msg="Reconciler error" controller=widget reconcileID=r5 error="boom: it broke"`,
			nil, FormatLogfmt, "Reconciler error", true, at, "", "r5"},
		{"logfmt (slog)", `time=2026-11-25T03:27:20.123Z level=INFO msg=reconciled reconcileID=r6`,
			nil, FormatLogfmt, "reconciled", false, at, "", "r6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := parseLine([]byte(tt.line), 2026, tt.keys)
			if !ok {
				t.Fatalf("not parsed")
			}
			if l.Format != tt.format || l.Msg != tt.msg || l.Error != tt.isErr || l.Time.Sub(tt.time).Abs() > time.Microsecond || l.Logger != tt.logger || l.Str("reconcileID") != tt.id {
				t.Errorf("format %s msg %q error %v time %s logger %q reconcileID %q; want %s %q %v %s %q %q",
					l.Format, l.Msg, l.Error, l.Time, l.Logger, l.Str("reconcileID"), tt.format, tt.msg, tt.isErr, tt.time, tt.logger, tt.id)
			}
		})
	}
	// Lines that are not a log line of any logger.
	for _, line := range []string{`{"not":"a log line"}`, `Starting manager`, `key=value only`, `{"message":{"nested":1}}`} {
		if _, ok := ParseLine([]byte(line), 2026); ok {
			t.Errorf("%q parsed", line)
		}
	}
}

// A controller logging at info (zap production: "message", upper-case levels, no V(5)): each
// reconcile is rebuilt from every line that carries its reconcileID, bounded by its first and
// last lines; an error line makes it an error, otherwise its result is unknown.
func TestReconstructInfoLevel(t *testing.T) {
	const head = `{"level":"%s","time":"2026-11-25T03:27:%sZ","logger":"widget","message":"%s","controller":"widget","controllerGroup":"example.com","controllerKind":"Widget","Widget":{"name":"%s","namespace":"demo"},"namespace":"demo","name":"%s","reconcileID":"%s"%s}`
	line := func(level, sec, msg, name, id, extra string) []byte {
		return []byte(fmt.Sprintf(head, level, sec, msg, name, name, id, extra))
	}
	r := NewReconstructor("mgr.log")
	now := time.Date(2026, 11, 25, 3, 27, 20, 0, time.UTC)
	var got []Reconcile
	for _, l := range [][]byte{
		[]byte(`{"level":"INFO","time":"2026-11-25T03:27:19.000Z","message":"Starting workers","controller":"widget","worker count":1}`),
		line("INFO", "20.100", "created deployment", "shop", "a", ""),
		line("INFO", "20.150", "created deployment", "cart", "b", ""),
		line("INFO", "20.300", "updated status", "shop", "a", ""),
		line("ERROR", "20.400", "status update failed", "cart", "b", `,"error":"conflict"`),
		line("ERROR", "20.500", "Reconciler error", "cart2", "c", `,"error":"boom"`),
	} {
		got = append(got, r.Feed(l, now)...)
	}
	if len(got) != 1 || got[0].ReconcileID != "c" || got[0].Result != ResultError || got[0].Error != "boom" || got[0].Bounds != BoundsLines || got[0].DurationKnown {
		t.Fatalf("before the log went quiet: %+v, want c's Reconciler error alone (bounds lines, no duration)", got)
	}
	if got = r.Due(now.Add(idle), idle); len(got) != 0 {
		t.Fatalf("%d reconciles a second after their last line, the log saying nothing newer: want them open (it may be read late)", len(got))
	}
	got = r.Due(now.Add(quietIdle), idle)
	if len(got) != 2 {
		t.Fatalf("%d reconciles once the log went quiet, want 2: %+v", len(got), got)
	}
	byID := map[string]Reconcile{got[0].ReconcileID: got[0], got[1].ReconcileID: got[1]}
	a, b := byID["a"], byID["b"]
	if a.Result != ResultUnknown || a.Lines != 2 || a.Bounds != BoundsLines || a.DurationKnown || a.Object != (ObjectRef{"Widget", "demo", "shop"}) ||
		!a.Start.Equal(time.Date(2026, 11, 25, 3, 27, 20, 100e6, time.UTC)) || !a.End.Equal(time.Date(2026, 11, 25, 3, 27, 20, 300e6, time.UTC)) || a.Format != FormatJSON {
		t.Errorf("a: %+v", a)
	}
	if b.Result != ResultError || b.Error != "conflict" || b.Lines != 2 || b.Bounds != BoundsLines {
		t.Errorf("b: %+v", b)
	}
	if r.Stats.Reconciles != 3 || r.Stats.ByFormat[FormatJSON] != 6 {
		t.Errorf("stats %+v", r.Stats)
	}
}

// At verbosity 5 a reconcile's start and end are the controller's own: bounds logged; a
// "Reconcile successful" after an error line inside it makes it ok.
func TestReconstructV5Bounds(t *testing.T) {
	r := NewReconstructor("t")
	var got []Reconcile
	for _, l := range []string{
		`{"level":"DEBUG","time":"2026-11-25T03:27:20.1Z","message":"Reconciling","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a"}`,
		`{"level":"ERROR","time":"2026-11-25T03:27:20.2Z","message":"retrying a write","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a","error":"conflict"}`,
		`{"level":"DEBUG","time":"2026-11-25T03:27:20.3Z","message":"Reconcile successful","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a"}`,
	} {
		got = append(got, r.Feed([]byte(l), time.Now())...)
	}
	if len(got) != 1 || got[0].Result != ResultOK || got[0].Bounds != BoundsLogged || !got[0].DurationKnown || got[0].Duration != 200*time.Millisecond {
		t.Fatalf("%+v", got)
	}
}

// A log that shows no reconcile says so, once, SilentAfter its first line: what it read, the
// keys it found and what it expected.
func TestSilent(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 27, 20, 0, time.UTC)
	tests := []struct {
		name  string
		lines []string
		want  []string // in the line; none: nothing said
	}{
		{"no message key", []string{`{"lvl":"INFO","t":"2026-11-25T03:27:20Z","text":"started","controller":"widget"}`, `{"lvl":"INFO","t":"2026-11-25T03:27:20Z","text":"reconciled","reconcileID":"a"}`},
			[]string{"controller log mgr.log: no reconcile in its 2 lines read so far", "2 of its structured lines have no message", "their keys: controller, lvl, reconcileID, t, text", "--controller-log-keys message=KEY"}},
		{"info, no reconcileID", []string{`{"level":"INFO","time":"2026-11-25T03:27:20Z","message":"Starting workers","controller":"widget","worker count":1}`},
			[]string{"(1 json)", "no line carries a reconcileID", "its keys: controller, level, message, time, worker count", "--zap-log-level=5", "--controller-log-keys reconcileID=KEY"}},
		{"no format", []string{"hello", "world"}, []string{"none is in a format known", `e.g. "hello"`}},
		{"a reconcile", []string{`{"level":"ERROR","time":"2026-11-25T03:27:20Z","message":"Reconciler error","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a"}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReconstructor("mgr.log")
			for _, l := range tt.lines {
				r.Feed([]byte(l), t0)
			}
			if s := r.Silent(t0.Add(SilentAfter - time.Millisecond)); s != "" {
				t.Fatalf("said before %s: %s", SilentAfter, s)
			}
			s := r.Silent(t0.Add(SilentAfter))
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("%q\nwant %q in it", s, w)
				}
			}
			if tt.want == nil && s != "" {
				t.Errorf("said %q of a log with a reconcile", s)
			}
			if again := r.Silent(t0.Add(time.Hour)); again != "" {
				t.Errorf("said twice: %s", again)
			}
		})
	}
}

// A singleton controller's reconciles name no object: they are counted, never a reconcile of
// no object, and a log of nothing else says so.
func TestReconcileOfNoObject(t *testing.T) {
	r := NewReconstructor("mgr.log")
	t0 := time.Date(2026, 11, 25, 3, 27, 20, 0, time.UTC)
	got := r.Feed([]byte(`{"level":"INFO","time":"2026-11-25T03:27:20Z","message":"pricing refreshed","controller":"pricing","reconcileID":"s1"}`), t0)
	got = append(got, r.Feed([]byte(`{"level":"ERROR","time":"2026-11-25T03:27:20Z","message":"Reconciler error","controller":"pricing","reconcileID":"s2","error":"x"}`), t0)...)
	got = append(got, r.Flush()...)
	if len(got) != 0 || r.Stats.NoObject != 2 || r.Stats.Reconciles != 0 || r.Stats.NoObjectBy["pricing"] != 2 {
		t.Fatalf("%+v, stats %+v: want none, 2 of no object, both of controller pricing", got, r.Stats)
	}
	if s := r.Silent(t0.Add(SilentAfter)); !strings.Contains(s, "2 reconciles (lines with a reconcileID) name no object") {
		t.Errorf("said %q", s)
	}
}

// The widget-operator as operators ship it (testdata/README.md: zap production, "message",
// upper-case levels, info level): one reconcile per reconcileID, of the Widget its lines name,
// bounded by its lines; every reconcile its counter says logged a line is one of them.
func TestReconstructShipped(t *testing.T) {
	recs, r, lines := readLog(t, "widget-operator-shipped.log")
	ids := map[string]bool{}
	for _, l := range lines {
		if i := strings.Index(l, `"reconcileID":"`); i >= 0 {
			ids[l[i:i+52]] = true
		}
	}
	metrics, err := os.ReadFile(filepath.Join("testdata", "widget-operator-shipped.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	var logged int
	if _, err := fmt.Sscanf(string(metrics[strings.Index(string(metrics), "widget_operator_reconciles_logged_total"):]), `widget_operator_reconciles_logged_total{controller="widget"} %d`, &logged); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ids) || len(recs) < logged {
		t.Fatalf("%d reconciles, want one per reconcileID (%d), at least the %d its counter says logged a line", len(recs), len(ids), logged)
	}
	results, names := map[string]int{}, map[string]int{}
	for _, rc := range recs {
		results[rc.Result]++
		names[rc.Object.Name]++
		if rc.Controller != "widget" || rc.Object.Kind != "Widget" || rc.Object.Namespace != "default" || rc.Bounds != BoundsLines ||
			rc.DurationKnown || !rc.Precise || rc.Format != FormatJSON || rc.Lines < 1 {
			t.Fatalf("reconcile %+v", rc)
		}
	}
	if results[ResultError] != 1 || results[ResultUnknown] != len(recs)-1 {
		t.Errorf("results %v: want the shutdown's one error, every other unknown", results)
	}
	for _, n := range []string{"plain", "loop", "fight"} {
		if names[n] == 0 {
			t.Errorf("no reconcile of %s: %v", n, names)
		}
	}
	if r.Stats.ByFormat[FormatJSON] != len(lines) || r.Stats.Other != 0 {
		t.Errorf("stats %+v: want all %d lines json", r.Stats, len(lines))
	}
	t.Logf("%d reconciles (%d logged a line by its counter), results %v, objects %v", len(recs), logged, results, names)
}

// A reconcile whose end is not logged is over once its log has moved on past it by the log's own
// clock, not when this machine read nothing of it for a second: a loaded machine reads two lines
// 0.4 s apart 1.5 s apart (Karpenter's "registered nodeclaim", "initialized nodeclaim"), and
// they are one reconcile, not two.
func TestReconcileReadLateIsOne(t *testing.T) {
	const head = `{"level":"INFO","time":"2026-11-25T03:27:%sZ","message":"%s","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"%s"},"name":"%s","reconcileID":"%s"}`
	line := func(sec, msg, name, id string) []byte { return []byte(fmt.Sprintf(head, sec, msg, name, name, id)) }
	r := NewReconstructor("karpenter.log")
	read := time.Date(2026, 11, 25, 3, 27, 21, 0, time.UTC)
	if got := r.Feed(line("20.000", "registered nodeclaim", "n1", "a"), read); len(got) != 0 {
		t.Fatalf("closed at its first line: %+v", got)
	}
	if got := r.Due(read.Add(1500*time.Millisecond), idle); len(got) != 0 {
		t.Fatalf("closed after 1.5 s read nothing, its log saying nothing newer: %+v", got)
	}
	r.Feed(line("20.400", "initialized nodeclaim", "n1", "a"), read.Add(1500*time.Millisecond))
	// The log moves on: another reconcile's line, more than a second later by the log's clock.
	r.Feed(line("22.000", "registered nodeclaim", "n2", "b"), read.Add(1600*time.Millisecond))
	got := r.Due(read.Add(2600*time.Millisecond), idle)
	if len(got) != 1 || got[0].ReconcileID != "a" || got[0].Lines != 2 {
		t.Fatalf("got %+v, want a's one reconcile of 2 lines, closed once its log moved on", got)
	}
}
