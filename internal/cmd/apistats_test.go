package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
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
		{name: "bad wire", opts: APIOptions{Wire: "protobuf"}, wantErr: `--wire must be one of auto, json; got "protobuf"`},
		{name: "json wire", opts: APIOptions{Wire: "json"}, wantQPS: 5, wantBurst: 10},
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

// A recording's ApiStats and Throttled lines replay: printed, counted in the summary.
func TestReplayAPIStats(t *testing.T) {
	at := rt0.Add(10 * time.Second)
	events := append(replayEvents(),
		watch.Event{
			Type:      watch.Throttled,
			Time:      at,
			Resource:  cmRes,
			Lifecycle: watch.LifecycleInfo{Verb: "LIST", Reason: string(apistats.NoticeTooManyRequests)},
			Stats:     watch.StatsInfo{RetryAfter: time.Second, APF: &apistats.APF{FlowSchema: "fs", PriorityLevel: "pl", FlowSchemaUID: "u1", PriorityLevelUID: "u2"}},
		},
		watch.Event{
			Type:     watch.ApiStats,
			Time:     at,
			Resource: cmRes,
			Stats: watch.StatsInfo{Final: true, API: &apistats.Snapshot{
				Requests: []apistats.Request{{Verb: "LIST", Code: 200, Count: 3}}, Lists: 1, ListPages: 3, LastListPages: 3, BytesReceived: 100, BytesDecoded: 100, Objects: 2}},
		})
	path, _ := record(t, events, false)
	out, errOut, err := runReplay(t, context.Background(), "", path)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	figures := "requests LIST 200×3; 1 lists (0 streaming), 3 pages (last list 3); received 100 B; 2 objects"
	if want := `LIST rejected with 429 Too Many Requests, Retry-After 1s by APF flow schema "fs", priority level "pl"`; !strings.Contains(out, want) {
		t.Errorf("replay output lacks %q:\n%s", want, out)
	}
	// As in the live human run, the ApiStats line at exit is the summary's unless asked for.
	if strings.Contains(out, figures) {
		t.Errorf("replay printed the ApiStats line at exit unasked:\n%s", out)
	}
	if !strings.Contains(errOut, "api configmaps: "+figures) {
		t.Errorf("replay summary lacks the api line:\n%s", errOut)
	}
	out, errOut, err = runReplay(t, context.Background(), "", path, "--types", "ApiStats")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "ApiStats    configmaps  "+figures) {
		t.Errorf("replay --types ApiStats lacks the line:\n%s", out)
	}
}
