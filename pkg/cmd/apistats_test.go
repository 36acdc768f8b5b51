package cmd

import (
	"testing"
	"time"
)

func TestAPIOptionsValidate(t *testing.T) {
	tests := []struct {
		name      string
		opts      APIOptions
		wantErr   string
		wantQPS   float32
		wantBurst int
	}{
		{name: "defaults are client-go's", opts: APIOptions{}, wantQPS: 5, wantBurst: 10},
		{name: "a controller's", opts: APIOptions{QPS: 50, Burst: 100, ListMode: "list", ChunkSize: 500, Interval: time.Minute}, wantQPS: 50, wantBurst: 100},
		{name: "no limiter", opts: APIOptions{QPS: -1}, wantQPS: -1},
		{name: "bad list mode", opts: APIOptions{ListMode: "stream"}, wantErr: `--list-mode must be one of auto, watchlist, list; got "stream"`},
		{name: "negative interval", opts: APIOptions{Interval: -time.Second}, wantErr: "--api-stats must be >= 0, got -1s"},
		{name: "negative burst", opts: APIOptions{Burst: -1}, wantErr: "--burst must be >= 0, got -1"},
		{name: "negative chunk size", opts: APIOptions{ChunkSize: -5}, wantErr: "--chunk-size must be >= 0, got -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if qps, burst := tt.opts.limits(); qps != tt.wantQPS || burst != tt.wantBurst {
				t.Errorf("limits() = %v, %d; want %v, %d", qps, burst, tt.wantQPS, tt.wantBurst)
			}
		})
	}
}
