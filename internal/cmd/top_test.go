package cmd

import (
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestTopValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(o *TopOptions)
		wantErr string
	}{
		{"defaults", func(*TopOptions) {}, ""},
		{"window", func(o *TopOptions) { o.Window = 500 * time.Millisecond }, "--window must be >= 1s, got 500ms"},
		{"interval", func(o *TopOptions) { o.Interval = 0 }, "--interval must be > 0, got 0s"},
		{"duration", func(o *TopOptions) { o.Duration = -time.Second }, "--duration must be >= 0, got -1s"},
		{"limit", func(o *TopOptions) { o.Limit = -1 }, "--limit must be >= 0, got -1"},
		{"output", func(o *TopOptions) { o.Output = "yaml" }, `unable to match a printer suitable for the output format "yaml", allowed formats are: json`},
		{"follow", func(o *TopOptions) { o.Follow = -1 }, "--follow must be >= 0, got -1"},
		{"hot-loop-updates", func(o *TopOptions) { o.HotLoopUpdates = 0 }, "--hot-loop-updates must be >= 1, got 0"},
		{"hot-loop-window", func(o *TopOptions) { o.HotLoopWindow = 0 }, "--hot-loop-window must be > 0, got 0s"},
		{"rediscover", func(o *TopOptions) { o.Rediscover = -time.Second }, "--rediscover must be >= 0, got -1s"},
		{"api", func(o *TopOptions) { o.API.Burst = -1 }, "--burst must be >= 0, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewTopOptions(nil, genericiooptions.IOStreams{})
			o.API.ListMode, o.API.Wire = "auto", "auto"
			tt.mod(o)
			err := o.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
