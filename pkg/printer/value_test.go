package printer

import (
	"strings"
	"testing"
)

// A value too long for a line is said, not cut mid-way: a list by its length and its elements'
// keys, a map by its fields (the review saw `[{"lastProbeTime":null,...,"status":"Tr…`).
func TestHumanValueSummary(t *testing.T) {
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T22:07:08Z"}
	}
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"short stays JSON", []any{"a", "b"}, `["a","b"]`},
		{"conditions by type", []any{cond("Initialized"), cond("Ready"), cond("ContainersReady")}, "[3 items: type=Initialized, type=Ready, type=ContainersReady]"},
		{"one item", []any{cond("PodScheduled")}, "[1 item: type=PodScheduled]"},
		{"a list without keys", []any{long, long}, "[2 items]"},
		{"a map by its scalars", map[string]any{"type": "Ready", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-11-22T22:07:08Z", "sub": map[string]any{}}, "{lastTransitionTime=2026-11-22T22:07:08Z, status=True, sub={…}, type=Ready}"},
		{"a long string is cut", long, `"` + strings.Repeat("x", 78) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := humanValue(tt.v, true, false); got != tt.want {
				t.Errorf("humanValue = %s, want %s", got, tt.want)
			}
		})
	}
}
