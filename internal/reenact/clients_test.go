package reenact

import (
	"testing"

	"k8s.io/client-go/rest"
)

// The write client is not held to client-go's default rate (5/s), which played a recording of
// a few hundred writes minutes late.
func TestWriteConfigRate(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:1"}
	cfg := writeConfig(in)
	if cfg.QPS < 100 || cfg.Burst < 100 {
		t.Errorf("write client QPS %v burst %d, want at least 100 each", cfg.QPS, cfg.Burst)
	}
	if in.QPS != 0 || cfg.UserAgent != "kubectl-informer-reenact" {
		t.Errorf("the caller's config changed (QPS %v) or the user agent is %q", in.QPS, cfg.UserAgent)
	}
}
