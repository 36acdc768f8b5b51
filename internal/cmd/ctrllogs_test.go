package cmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/internal/podlogs"
)

func TestControllerLogsFromValidate(t *testing.T) {
	tests := []struct {
		name      string
		from      []string
		container string
		want      []podlogs.Target
		wantErr   string
	}{
		{name: "workloads", from: []string{"deploy/mgr", "my-system/sts/web", "pod/x"},
			want: []podlogs.Target{{Ref: "deploy/mgr"}, {Namespace: "my-system", Ref: "sts/web"}, {Ref: "pod/x"}}},
		{name: "a container", from: []string{"deploy/mgr"}, container: "manager", want: []podlogs.Target{{Ref: "deploy/mgr"}}},
		{name: "no type", from: []string{"foo"}, wantErr: `--controller-logs-from "foo": arguments in resource/name form must have a single resource and name`},
		{name: "no name", from: []string{"deploy/"}, wantErr: `--controller-logs-from "deploy/": arguments in resource/name form`},
		{name: "too many parts", from: []string{"x/y/z/w"}, wantErr: `--controller-logs-from "x/y/z/w": arguments in resource/name form`},
		{name: "a container alone", container: "manager", wantErr: "--controller-logs-container needs --controller-logs-from"},
		{name: "not a container name", from: []string{"deploy/mgr"}, container: "Manager!", wantErr: `--controller-logs-container "Manager!" is not a container name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewWatchOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.resourceArg, o.Logs.From, o.Logs.Container = "widgets", tt.from, tt.container
			err := o.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Validate() = %v, want one line with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o.Logs.from); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerLogKeysValidate(t *testing.T) {
	tests := []struct {
		name, keys string
		files      []string
		want       *ctrllog.Keys
		wantErr    string
	}{
		{name: "none", files: []string{"mgr.log"}},
		{name: "named", keys: "message=msg,time=@timestamp", files: []string{"mgr.log"}, want: &ctrllog.Keys{Message: "msg", Time: "@timestamp"}},
		{name: "no log", keys: "message=msg", wantErr: "--controller-log-keys needs --controller-logs or --controller-logs-from"},
		{name: "unknown part", keys: "text=msg", files: []string{"-"}, wantErr: `--controller-log-keys "text=msg": unknown part "text": want one of message, level, time,`},
		{name: "no key", keys: "message=", files: []string{"-"}, wantErr: `--controller-log-keys "message=": message= names no key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewWatchOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.resourceArg, o.Logs.Files, o.Logs.Keys = "widgets", tt.files, tt.keys
			err := o.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Validate() = %v, want one line with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o.Logs.keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// -c is kubectl logs' own short name for the container; watch has no other use for it.
func TestControllerLogsContainerShorthand(t *testing.T) {
	cmd := NewCmdWatch(nil, genericiooptions.NewTestIOStreamsDiscard())
	f := cmd.Flags().ShorthandLookup("c")
	if f == nil || f.Name != "controller-logs-container" {
		t.Fatalf("-c is %v, want --controller-logs-container", f)
	}
	if err := cmd.Flags().Parse([]string{"--controller-logs-from", "deploy/a", "--controller-logs-from", "b/pod/c", "-c", "manager"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := cmd.Flags().GetStringArray("controller-logs-from"); len(got) != 2 {
		t.Errorf("--controller-logs-from repeated: %v", got)
	}
}
