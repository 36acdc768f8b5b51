package cmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func TestWatchValidateTypes(t *testing.T) {
	tests := []struct {
		name    string
		types   []string
		want    map[watch.Type]bool
		wantErr string
	}{
		{name: "none: every type", types: nil, want: nil},
		{name: "any case, spaces", types: []string{"updated", " Relist", "HOTLOOP"}, want: map[watch.Type]bool{watch.Updated: true, watch.Relist: true, "HotLoop": true}},
		{name: "unknown", types: []string{"Added", "Teleported"}, wantErr: `unknown type "Teleported" in --types; known types: Informer, Added, Updated`},
		{name: "empty", types: []string{""}, wantErr: `unknown type "" in --types`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewWatchOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.resourceArg, o.Types, o.HotLoopUpdates, o.HotLoopWindow = "cm", tt.types, 10, 30e9
			err := o.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o.types); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
		})
	}
}
