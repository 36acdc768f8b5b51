package cmd

import (
	"strings"
	"testing"
	"time"
)

func TestMetricsValidate(t *testing.T) {
	const u = "https://127.0.0.1:8443/metrics"
	tests := []struct {
		name    string
		m       MetricsOptions
		wantErr string
	}{
		{name: "none", m: MetricsOptions{Interval: time.Second}},
		{name: "https with a CA and a token file", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, CAFile: "ca.crt", TokenFile: "tok"}},
		{name: "service account", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, ServiceAccount: "monitoring/metrics-reader", InsecureSkipTLSVerify: true}},
		{name: "zero interval", m: MetricsOptions{URLs: []string{u}}, wantErr: "--metrics-interval must be > 0"},
		{name: "not http", m: MetricsOptions{Interval: time.Second, URLs: []string{"ftp://x/metrics"}}, wantErr: `--metrics-url "ftp://x/metrics" must be an http(s) URL`},
		{name: "CA and insecure", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, CAFile: "ca", InsecureSkipTLSVerify: true}, wantErr: "--metrics-ca-file and --metrics-insecure-skip-tls-verify cannot be used together"},
		{name: "two credentials", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, TokenFile: "t", ServiceAccount: "a/b"}, wantErr: "--metrics-token-file and --metrics-serviceaccount cannot be used together"},
		{name: "service account without namespace", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, ServiceAccount: "reader"}, wantErr: `--metrics-serviceaccount "reader" must be NAMESPACE/NAME`},
		{name: "service account bad name", m: MetricsOptions{Interval: time.Second, URLs: []string{u}, ServiceAccount: "a/B_c"}, wantErr: "must be NAMESPACE/NAME"},
		{name: "credentials without a URL", m: MetricsOptions{Interval: time.Second, TokenFile: "t"}, wantErr: "--metrics-token-file needs --metrics-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The writes a watch may make follow its flags: none without --metrics-serviceaccount or
// --metrics-from.
func TestMetricsPermits(t *testing.T) {
	m := NewMetricsOptions()
	if p := m.permits(); p.TokenRequest || p.SubjectAccessReview || p.PortForward || p.Writes {
		t.Errorf("no metrics flags: %+v", p)
	}
	m.ServiceAccount, m.From = "demo/scraper", []string{"deploy/x:8443"}
	if p := m.permits(); !p.TokenRequest || !p.SubjectAccessReview || !p.PortForward || p.Writes {
		t.Errorf("--metrics-serviceaccount --metrics-from: %+v", p)
	}
}
