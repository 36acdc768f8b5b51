package printer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The audit log's request (--audit-log) is said on the line it made: "by USER" where no field
// manager is named (a create, a delete), "user=USER" beside one; the JSON keeps it whole.
func TestAuditRendered(t *testing.T) {
	admin := &watch.AuditInfo{User: "admin", ImpersonatedUser: "alice", UserAgent: "kubectl/v1.34", AuditID: "a1", Verb: "delete", Matched: watch.AuditByDelete}
	sa := &watch.AuditInfo{User: "system:serviceaccount:ns:writer", ServiceAccount: "ns/writer", AuditID: "a2", Verb: "create", Matched: watch.AuditByTime}
	evs := []watch.Event{
		{Type: watch.Added, Time: t0, Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "101", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: obj("demo", "api", "101"), Audit: sa}},
		{Type: watch.Deleted, Time: t0, Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "102", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Object: obj("demo", "api", "102"), Audit: admin}},
	}
	human := render(t, Options{Timestamps: "none"}, evs)
	for _, want := range []string{"api  rv=101  by system:serviceaccount:ns:writer (audit, by time)", "api  rv=102  by admin (as alice)"} {
		if !strings.Contains(human, want) {
			t.Errorf("human output lacks %q:\n%s", want, human)
		}
	}
	out := render(t, Options{Output: "json"}, evs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m struct {
		Audit map[string]string `json:"audit"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"user": "admin", "impersonatedUser": "alice", "userAgent": "kubectl/v1.34", "auditID": "a1", "verb": "delete", "matched": "delete"}
	for k, v := range want {
		if m.Audit[k] != v {
			t.Errorf("audit.%s = %q, want %q: %s", k, m.Audit[k], v, lines[1])
		}
	}
	// A recording keeps it: replay says who deleted.
	back, err := recording.DecodeEvent([]byte(lines[1]))
	if err != nil {
		t.Fatal(err)
	}
	if back.Obj.Audit == nil || *back.Obj.Audit != *admin {
		t.Errorf("decoded audit %+v, want %+v", back.Obj.Audit, admin)
	}
}

// An audit user name or agent made to hurt a terminal is escaped (TestHostileEveryFieldHuman
// covers every field; this one names the audit's).
func TestAuditEscaped(t *testing.T) {
	a := &watch.AuditInfo{User: "evil\x1b]0;TITLE\x07\x1b[2J", ImpersonatedUser: "x\rfake", AuditID: "a", Verb: "create"}
	out := render(t, Options{Timestamps: "none"}, []watch.Event{{Type: watch.Added, Time: t0, Resource: deploy, Namespace: "demo", Name: "api", ResourceVersion: "1", Obj: watch.ObjectInfo{Object: obj("demo", "api", "1"), Audit: a}}})
	if i := strings.IndexAny(strings.TrimSuffix(out, "\n"), "\x1b\x07\r\n"); i >= 0 {
		t.Errorf("raw control byte in %q", out)
	}
	if !strings.Contains(out, `by evil^[]0;TITLE\x07^[[2J (as x\rfake)`) {
		t.Errorf("escaped names missing: %q", out)
	}
}
