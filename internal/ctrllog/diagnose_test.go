package ctrllog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A followed log that shows no reconcile is said on stderr (Config.Notice) within seconds of its
// first line, once, with the keys it found: here a zap production log at info whose reconciles
// logged nothing.
func TestRunnerSaysSilentLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mgr.log")
	lines := `{"level":"INFO","time":"2026-11-25T03:27:19.000Z","logger":"controller-runtime.metrics","message":"Starting metrics server"}
{"level":"INFO","time":"2026-11-25T03:27:19.100Z","message":"Starting workers","controller":"widget","controllerGroup":"example.com","controllerKind":"Widget","worker count":1}
`
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	notices := make(chan string, 8)
	r := Start(context.Background(), Config{Sources: []string{path}, Notice: func(s string) { notices <- s }})
	defer r.Stop()
	deadline := time.After(SilentAfter + 10*time.Second)
	for {
		select {
		case s := <-notices:
			if !strings.Contains(s, "no reconcile") {
				continue
			}
			for _, want := range []string{"controller log " + path, "2 lines", "(2 json)", "no line carries a reconcileID", "controllerKind, level, logger, message, time", "--zap-log-level=5"} {
				if !strings.Contains(s, want) {
					t.Errorf("notice %q lacks %q", s, want)
				}
			}
			return
		case <-deadline:
			t.Fatalf("no notice of a log without reconciles within %s", SilentAfter+10*time.Second)
		}
	}
}
