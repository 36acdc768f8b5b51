package replayrun

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

// A replay's spans carry the cluster the recording's header names, read from its first line;
// an older recording names none.
func TestClusterOfHeader(t *testing.T) {
	for _, tt := range []struct{ header, name, uid string }{
		{`{"type":"Recording","formatVersion":1,"time":"2026-11-28T03:00:00Z","pluginVersion":"v1","serverVersion":"v1.37.1","resources":[],"secretsRedacted":true,"flags":{},"cluster":{"name":"kind-a","uid":"0f9c"}}`, "kind-a", "0f9c"},
		{`{"type":"Recording","formatVersion":1,"time":"2026-11-28T03:00:00Z","pluginVersion":"v1","serverVersion":"v1.37.1","resources":[],"secretsRedacted":true,"flags":{}}`, "", ""},
	} {
		rd, err := replay.NewReader(strings.NewReader(tt.header + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		line, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if c := clusterOf(line.Header); c.ClusterName != tt.name || c.ClusterUID != tt.uid {
			t.Errorf("cluster %+v, want %q %q", c, tt.name, tt.uid)
		}
	}
}
