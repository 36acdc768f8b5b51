package portforward

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    Target
		wantErr string
	}{
		{in: "deploy/my-controller-manager:8443", want: Target{Ref: "deploy/my-controller-manager", Port: "8443", Path: "/metrics"}},
		{in: "pod/web-0:8080/custom/metrics", want: Target{Ref: "pod/web-0", Port: "8080", Path: "/custom/metrics"}},
		{in: "https://deployment.apps/mgr:https", want: Target{Ref: "deployment.apps/mgr", Port: "https", Scheme: "https", Path: "/metrics"}},
		{in: "http://pod/x:80/", want: Target{Ref: "pod/x", Port: "80", Scheme: "http", Path: "/"}},
		{in: "mgr:8443", wantErr: "must be [NAMESPACE/]TYPE/NAME:PORT[/PATH]"},
		{in: "deploy/mgr", wantErr: "must be [NAMESPACE/]TYPE/NAME:PORT[/PATH]"},
		{in: "my-system/deploy/mgr:8443", want: Target{Namespace: "my-system", Ref: "deploy/mgr", Port: "8443", Path: "/metrics"}},
		{in: "a/deploy/b/c:80", wantErr: "must be [NAMESPACE/]TYPE/NAME:PORT[/PATH]"},
		{in: "deploy/mgr:0", wantErr: "port 0 out of range"},
		{in: "deploy/mgr:", wantErr: "the port must be a number or a container port's name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTarget(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
