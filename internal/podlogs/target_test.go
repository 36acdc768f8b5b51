package podlogs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTarget(t *testing.T) {
	const malformed = "arguments in resource/name form must have a single resource and name"
	tests := []struct {
		in      string
		want    Target
		wantErr string
	}{
		{in: "deploy/my-controller-manager", want: Target{Ref: "deploy/my-controller-manager"}},
		{in: "my-system/deploy/mgr", want: Target{Namespace: "my-system", Ref: "deploy/mgr"}},
		{in: "statefulset.apps/web", want: Target{Ref: "statefulset.apps/web"}},
		{in: "demo/pod/web-0", want: Target{Namespace: "demo", Ref: "pod/web-0"}},
		{in: "foo", wantErr: malformed},
		{in: "deploy/", wantErr: malformed},
		{in: "/mgr", wantErr: malformed},
		{in: "x/y/z/w", wantErr: malformed},
		{in: "/deploy/mgr", wantErr: malformed},
		{in: "ns//mgr", wantErr: malformed},
		{in: "", wantErr: malformed},
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
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}
