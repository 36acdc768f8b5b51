package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// A user's LISTs the API server rejects with 429 (a flow schema putting them in a priority level
// that admits nothing): top --audit-log names the user's 429s with that flow schema and priority
// level, which the audit log does not say and the plugin finds by the cluster's FlowSchemas.
func TestTopAuditThrottledByPriorityLevel(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	c := testenv.StartT(t, testenv.Options{Audit: true})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	user := "throttled-" + ns
	kc := userKubeconfig(t, c, user)
	grantReadConfigMaps(t, c, ns, user)
	name := "reject-" + ns
	rejectingLevel(t, c, name, user, ns)
	holdSeat(t, kc, ns) // returns once one of the user's requests was rejected

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := c.RunPlugin(t, ctx, "top", "configmaps", "-n", ns, "--audit-log", c.AuditLogPath, "-o", "json", "--duration", "5s")
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("top exited %d (%v)\n%s", code, err, p.Stderr())
	}
	var found map[string]any
	for _, b := range p.All() {
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m["type"] == "TopThrottled" && m["user"] == user {
			found = m
		}
	}
	if found == nil {
		t.Fatalf("no TopThrottled line of %s; stderr:\n%s\nlines:\n%s", user, p.Stderr(), strings.Join(p.Strings(), "\n"))
	}
	if found["flowSchema"] != name || found["priorityLevel"] != name {
		t.Errorf("the 429s of %s in flow schema %v, priority level %v; want %s, %s", user, found["flowSchema"], found["priorityLevel"], name, name)
	}
	t.Logf("TopThrottled: %v", found)
	if n, _ := found["requests"].(float64); n < 1 {
		t.Errorf("TopThrottled counts %v 429s, want at least the one holdSeat saw", found["requests"])
	}
}
