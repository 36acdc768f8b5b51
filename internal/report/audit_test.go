package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
)

// report --audit-log: each write in an object's history says who made it, by the audit log of
// the recorded time (the recording has no audit fields of its own).
func TestReportJoinsTheAuditLog(t *testing.T) {
	r := newRec()
	r.line(0, "Added", cm("demo", "cfg", "100", "m", "2026-11-21T05:00:00Z", "a")+`,"delta":"Added"`)
	r.line(10, "Updated", cm("demo", "cfg", "101", "m", "2026-11-21T05:00:00Z", "b")+`,"oldResourceVersion":"100","delta":"Updated"`)
	event := func(id, verb, user, rv string, ms int) string {
		ts := fmt.Sprintf("2026-11-21T05:00:00.%03dZ", ms)
		return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":%q,"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/demo/configmaps/cfg","verb":%q,"user":{"username":%q},"userAgent":"kubectl/v1.37.1","objectRef":{"resource":"configmaps","namespace":"demo","name":"cfg","apiVersion":"v1"},"responseStatus":{"code":200},"responseObject":{"metadata":{"name":"cfg","namespace":"demo","resourceVersion":%q}},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
			id, verb, user, rv, ts, ts)
	}
	log := event("a1", "create", "alice", "100", 0) + "\n" + event("a2", "update", "system:serviceaccount:demo:writer", "101", 10) + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	al, err := audit.OpenRecorded(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	rep, err := ReadJoined(strings.NewReader(r.b.String()), "cfg.ndjson", al)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, e := range rep.Objects[0].History {
		by = append(by, e.AuditBy)
	}
	if strings.Join(by, ",") != "alice,sa:demo/writer" {
		t.Errorf("history by the audit log: %q, want alice, sa:demo/writer", by)
	}
	var page strings.Builder
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `>(sa:demo/writer)</span>`) {
		t.Error("the page does not say who made the update")
	}
}
