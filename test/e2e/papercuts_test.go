package e2e

import (
	"strings"
	"testing"
)

// A --field-selector field the server does not support is a 400: one line naming it and exit 1,
// as kubectl get does, not a list retried until --timeout and exit 0 (issue #33).
func TestFieldSelectorUnsupported(t *testing.T) {
	ns := newNamespace(t, cluster)
	r := runPlugin(t, cluster, "watch", "pods", "-n", ns, "--field-selector", "foo=bar", "--timeout", "40s")
	lines := splitLines(strings.TrimSpace(r.stderr))
	if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, "BadRequest") || !strings.Contains(r.stderr, "foo") {
		t.Errorf("exit %d, stderr (%d lines):\n%s\nwant exit 1 and one line naming the bad request", r.code, len(lines), r.stderr)
	}
	t.Log(r.stderr)
}
