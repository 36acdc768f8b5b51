package ctrllog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Secrets that a controller's error lines may carry (HOSTILE-CASES-2's gen_logs.py, esc.log).
const (
	hostileJWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06ZGVmYXVsdCJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
	hostileESC = "\u001b]52;c;cHduZWQ=\u0007\u001b]0;PWNTITLE\u0007\u001b[2J\u001b[H\r\u009b31m\u202eevil"
)

// hostileSecrets are the texts of those secrets that must not come out.
var hostileSecrets = []string{"SECRETbearer123", hostileJWT[:40], "PASSWORD123", "QSECRET", "SECRETkl", "SECRETctl", "SECRETid"}

// escLog is gen_logs.py's esc.log: zap JSON reconciles whose error (and controller, and
// reconcileID) carry escapes, a bearer token, a JWT, a URL password and a query token, and a
// klog text line with a bearer token in its err.
func escLog(now time.Time) []string {
	var out []string
	line := func(m map[string]any) {
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	for i := range 3 {
		base := func(msg, level string) map[string]any {
			return map[string]any{"ts": now.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano), "level": level, "msg": msg,
				"controller": "ctl" + hostileESC + " Bearer SECRETctl", "controllerKind": "ConfigMap", "name": "plain", "namespace": "hl",
				"reconcileID": fmt.Sprintf("rid-%d?token=SECRETid", i)}
		}
		line(base("Reconciling", "debug"))
		m := base("Reconciler error", "error")
		m["error"] = "boom" + hostileESC + " Authorization: Bearer SECRETbearer123 token=" + hostileJWT + " https://user:PASSWORD123@host/x?access_token=QSECRET</script>"
		line(m)
	}
	out = append(out, fmt.Sprintf(`E%s 1 c.go:1] "Error syncing" logger="kl" objectName="hl/kobj" err="e\x1b]52;c;cHduZWQ=\x07 Bearer SECRETkl"`, now.Format("0102 15:04:05.000000")))
	return out
}

// Every text taken from a log goes through internal/redact (HOSTILE-CASES-2 F8): the bearer
// tokens, JWTs, URL passwords and query tokens of esc.log's errors, controller names and
// reconcileIDs are in no reconcile, so in no ControllerReconcile line, recording or report.
func TestReconstructRedactsCredentials(t *testing.T) {
	now := time.Now().UTC()
	r := NewReconstructor("esc.log")
	var recs []Reconcile
	for _, l := range escLog(now) {
		recs = append(recs, r.Feed([]byte(l), now)...)
	}
	recs = append(recs, r.Flush()...)
	if len(recs) != 4 {
		t.Fatalf("%d reconciles, want 4", len(recs))
	}
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}}})
	for _, rc := range recs {
		j.Add(rc)
	}
	evs := j.Flush()
	b, err := json.Marshal(struct {
		R []Reconcile
		E []watch.Event
	}{recs, evs})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range hostileSecrets {
		if strings.Contains(string(b), s) {
			t.Errorf("%q in the reconciles or their events: %s", s, b)
		}
	}
	if !strings.Contains(string(b), "xxxxx") || !strings.Contains(string(b), "boom") {
		t.Errorf("the errors are not there, masked: %s", b)
	}
}

// A log's time far after the read time (HOSTILE-CASES-2 F9: one line stamped 9999-12-31) is not
// trusted: the read time stands for it, and the reconcile says so. Trusted, it moved the
// object's cut to the year 9999, and every later reconcile of it said "no watched event".
func TestJoinFarFutureTimeNotTrusted(t *testing.T) {
	cms := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{cms}, Skew: DefaultSkew})
	r := NewReconstructor("live.log")
	line := func(ts, id string) string {
		return fmt.Sprintf(`{"ts":%q,"level":"info","msg":"Reconcile successful","controller":"pc","controllerKind":"ConfigMap","name":"plain","namespace":"hl","reconcileID":%q}`, ts, id)
	}
	read := time.Now().UTC()
	stamp := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	for _, rc := range r.Feed([]byte(line(stamp(read), "first")), read) {
		j.Add(rc)
	}
	for _, rc := range r.Feed([]byte(line("9999-12-31T23:59:59.999999Z", "future")), read.Add(time.Second)) {
		j.Add(rc)
	}
	j.Observe(&watch.Event{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated}, Resource: cms, Namespace: "hl", Name: "plain", ResourceVersion: "7", Time: read.Add(2 * time.Second)})
	for _, rc := range r.Feed([]byte(line(stamp(read.Add(3*time.Second)), "second")), read.Add(3*time.Second)) {
		j.Add(rc)
	}
	evs := j.Flush()
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	byID := map[string]watch.Event{}
	for _, ev := range evs {
		byID[ev.Reconcile.ReconcileID] = ev
	}
	if f := byID["future"]; !f.Reconcile.UntrustedTime || !f.Time.Equal(read.Add(time.Second)) {
		t.Errorf("the future reconcile: untrusted %v at %s, want untrusted at its read time %s", f.Reconcile.UntrustedTime, f.Time, read.Add(time.Second))
	}
	if s := byID["second"]; s.Queued.TriggerCount != 1 || s.Reconcile.UntrustedTime {
		t.Errorf("the second reconcile: %d triggers (reason %s), want the update after the future line", s.Queued.TriggerCount, s.Lifecycle.Reason)
	}
	if r.Stats.UntrustedTimes != 1 {
		t.Errorf("UntrustedTimes = %d, want 1", r.Stats.UntrustedTimes)
	}
}

// Every time a reconcile carries is one a recording can say (HOSTILE-CASES-2 F10: an epoch of
// -1e300 became the year 292277026304, which the plugin's replay refused): gen_logs.py's
// time.log, whose times are the years 9999 and 0001, huge epochs, and durations of 292 years
// and -1e300 seconds, gives only times from 1970 to an hour after the read.
func TestReconstructTimesTrusted(t *testing.T) {
	now := time.Now().UTC()
	var lines []string
	for i, ts := range []string{"9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00.000001Z", now.Format(time.RFC3339Nano), now.AddDate(-10, 0, 0).Format(time.RFC3339Nano)} {
		for _, msg := range []string{"Reconciling", "Reconcile successful"} {
			lines = append(lines, fmt.Sprintf(`{"ts":%q,"level":"info","msg":%q,"controller":"tc","controllerKind":"ConfigMap","name":"plain","namespace":"hl","reconcileID":"t%d"}`, ts, msg, i))
		}
	}
	for _, v := range []string{"1e300", "-1e300", "1e19"} {
		lines = append(lines, fmt.Sprintf(`{"ts":%s,"level":"info","msg":"Reconcile successful","controller":"tc","controllerKind":"ConfigMap","name":"plain","namespace":"hl","reconcileID":"e%s"}`, v, v))
	}
	kt := now.Format("0102 15:04:05.000000")
	lines = append(lines, fmt.Sprintf(`I%s 1 c.go:1] "Finished syncing" kind="ConfigMap" key="hl/plain" duration="2562047h"`, kt),
		fmt.Sprintf(`I%s 1 c.go:1] "Finished syncing" kind="ConfigMap" key="hl/plain" duration=-1e300`, kt))
	r := NewReconstructor("time.log")
	var recs []Reconcile
	for _, l := range lines {
		recs = append(recs, r.Feed([]byte(l), now)...)
	}
	recs = append(recs, r.Flush()...)
	if len(recs) < 9 {
		t.Fatalf("%d reconciles, want at least 9", len(recs))
	}
	untrusted := 0
	for _, rc := range recs {
		for _, at := range []time.Time{rc.Start, rc.End} {
			if !trusted(at, now) {
				t.Errorf("reconcile %s: a time %s, before 1970 or more than an hour after the read", rc.ReconcileID, at)
			}
		}
		if rc.UntrustedTime {
			untrusted++
		}
	}
	if untrusted != 6 {
		t.Errorf("%d reconciles flagged UntrustedTime, want 6 (years 9999 and 0001, the 3 epochs, the 292 years' duration)", untrusted)
	}
}

// An info-level operator's error line with no error key gives the reconcile its message as the
// error: it is masked like every other text taken from a log.
func TestInfoLevelErrorMessageRedacted(t *testing.T) {
	now := time.Now().UTC()
	r := NewReconstructor("mgr.log")
	line := fmt.Sprintf(`{"level":"ERROR","time":%q,"message":"calling https://user:PASSWORD123@api.example/x failed","controller":"widget","Widget":{"name":"shop","namespace":"demo"},"namespace":"demo","name":"shop","reconcileID":"r1"}`,
		now.Format(time.RFC3339Nano))
	recs := append(r.Feed([]byte(line), now), r.Flush()...)
	if len(recs) != 1 {
		t.Fatalf("%d reconciles, want 1: %+v", len(recs), recs)
	}
	if strings.Contains(recs[0].Error, "PASSWORD123") || !strings.Contains(recs[0].Error, "failed") {
		t.Errorf("error %q: want the message, its password masked", recs[0].Error)
	}
}

// Reconciles that never end (distinct reconcileIDs, no end line, read faster than they go
// quiet) are held at most MaxOpen at once: each one beyond closes an open one, counted.
func TestOpenReconcilesBounded(t *testing.T) {
	now := time.Now().UTC()
	ts := now.Format(time.RFC3339Nano)
	r := NewReconstructor("mgr.log")
	var closed int
	const n = MaxOpen + 1000
	for i := range n {
		line := fmt.Sprintf(`{"level":"INFO","time":%q,"message":"working","controller":"widget","namespace":"demo","name":"w%d","Widget":{"name":"w%d","namespace":"demo"},"reconcileID":"id-%d"}`, ts, i, i, i)
		closed += len(r.Feed([]byte(line), now))
	}
	if len(r.open) > MaxOpen {
		t.Errorf("%d reconciles open, want at most %d", len(r.open), MaxOpen)
	}
	if closed != n-MaxOpen || r.Stats.EndedEarly != n-MaxOpen {
		t.Errorf("%d closed early (counted %d), want %d", closed, r.Stats.EndedEarly, n-MaxOpen)
	}
}
