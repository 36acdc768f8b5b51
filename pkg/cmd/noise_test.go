package cmd

import (
	"strings"
	"testing"
	"time"
)

func TestNoiseFlagsValidate(t *testing.T) {
	tests := []struct {
		name     string
		ignore   []string
		only     []string
		fold     string
		wantFold time.Duration
		wantErr  string
	}{
		{name: "defaults", fold: "1s", wantFold: time.Second},
		{name: "off", fold: "off"},
		{name: "interval", fold: "5s", wantFold: 5 * time.Second},
		{name: "bad interval", fold: "soon", wantErr: `--fold must be off or an interval > 0 (e.g. 1s), got "soon"`},
		{name: "negative interval", fold: "-1s", wantErr: `--fold must be off or an interval > 0`},
		{name: "paths", ignore: []string{"-", `metadata.annotations["a/b"]`}, only: []string{"spec.replicas"}, fold: "1s", wantFold: time.Second},
		{name: "bad ignore path", ignore: []string{"status.conditions[*"}, fold: "1s", wantErr: `--ignore-path: invalid path "status.conditions[*": unclosed [ at offset 17`},
		{name: "bad only path", only: []string{"spec["}, fold: "1s", wantErr: `--only-path: invalid path "spec[": unclosed [`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &NoiseFlags{IgnorePaths: tt.ignore, OnlyPaths: tt.only, Fold: tt.fold}
			err := n.Validate()
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case n.fold != tt.wantFold:
				t.Errorf("fold %s, want %s", n.fold, tt.wantFold)
			}
		})
	}
}
