package cmd

import (
	"math"
	"strings"
	"testing"
	"time"

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
			o.resourceArg, o.Display.Types = "cm", tt.types
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
			if diff := cmp.Diff(tt.want, o.Display.types); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchValidateOrder(t *testing.T) {
	tests := []struct {
		name, resources, order string
		window                 float64
		wantWindow             float64
		owned, events          bool
		ownedResources         []string
		wantErr                string
	}{
		{name: "one resource --owned: several streams, held", resources: "deploy", order: "rv", owned: true, window: 0.1, wantWindow: 0.1},
		{name: "one resource --events: held", resources: "deploy", order: "rv", events: true, window: 0.1, wantWindow: 0.1},
		{name: "--owned-resources alone", resources: "widgets", order: "rv", ownedResources: []string{"cm"}, wantErr: "--owned-resources requires --owned"},
		{name: "several resources: held", resources: "deploy,rs", order: "rv", window: 0.1, wantWindow: 0.1},
		{name: "default is rv", resources: "deploy,rs", order: "", window: 0.1, wantWindow: 0.1},
		{name: "one resource: in order already", resources: "deploy", order: "rv", window: 0.1, wantWindow: 0},
		{name: "arrival", resources: "deploy,rs", order: "arrival", window: 0.1, wantWindow: 0},
		{name: "unknown", resources: "deploy,rs", order: "time", wantErr: `--order must be "rv" or "arrival", got "time"`},
		{name: "negative window", resources: "deploy,rs", order: "rv", window: -1, wantErr: "--order-window must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewWatchOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.resourceArg = tt.resources
			o.Order, o.OrderWindow = tt.order, time.Duration(tt.window*float64(time.Second))
			o.Owned, o.Events, o.OwnedResources = tt.owned, tt.events, tt.ownedResources
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
			if got := o.orderWindow().Seconds(); got != tt.wantWindow {
				t.Errorf("orderWindow = %vs, want %vs", got, tt.wantWindow)
			}
		})
	}
}

// B7, L12: flags that size memory or rates are bounded; NaN is no rate.
func TestWatchValidateBounds(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *WatchOptions)
		wantErr string
	}{
		{"--workers 100000000", func(o *WatchOptions) { o.Workers = 100_000_000 }, "--workers must be between 1 and 1000, got 100000000"},
		{"--workers 0", func(o *WatchOptions) { o.Workers = 0 }, "--workers must be between 1 and 1000"},
		{"--workers 1000", func(o *WatchOptions) { o.Workers = 1000 }, ""},
		{"--output-buffer -1", func(o *WatchOptions) { o.OutputBuffer = -1 }, "--output-buffer must be between 1 and 1000000, got -1"},
		{"--qps NaN", func(o *WatchOptions) { o.API.QPS = float32(math.NaN()) }, "--qps must be a number, got NaN"},
		{"--qps +Inf", func(o *WatchOptions) { o.API.QPS = float32(math.Inf(1)) }, "--qps must be a number"},
	}
	for _, tt := range tests {
		o := NewWatchOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
		o.resourceArg = "cm"
		tt.set(o)
		err := o.Validate()
		if (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr))) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}
