package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// created is the creationTimestamp of the test objects.
var created = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// obj parses YAML the way the dynamic client decodes JSON: integers as int64.
func obj(t testing.TB, y string) *unstructured.Unstructured { return testutil.YAML(t, y) }

const podSpec = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: demo, creationTimestamp: "2026-05-01T10:00:00Z"}
spec: {containers: [{name: c, image: web:1}]}
`

var widgetColumns = []discovery.PrinterColumn{
	{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
	{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
	{Name: "Ratio", Type: "number", JSONPath: ".status.ratio"},
	{Name: "Paused", Type: "boolean", JSONPath: ".spec.paused"},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	{Name: "Owner", Type: "string", JSONPath: ".spec.owner", Priority: 1},
	{Name: "Broken", Type: "string", JSONPath: ".spec[", Priority: 0},
}

func TestOf(t *testing.T) {
	tests := []struct {
		name    string
		obj     string
		columns []discovery.PrinterColumn
		at      time.Duration // after creation
		want    *State
	}{
		{
			name: "a ConfigMap has no state",
			obj:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
		},
		{
			name: "a deployment seen through --metadata-only has no state",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\n",
		},
		{
			name: "a deletion request reads Terminating with the finalizers holding it",
			obj:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, deletionTimestamp: '2026-05-01T10:00:05Z', finalizers: [example.com/hold, foregroundDeletion]}\n",
			want: &State{Status: Terminating, Message: "deletion requested; waiting for finalizers: example.com/hold, foregroundDeletion", Finalizers: []string{"example.com/hold", "foregroundDeletion"}},
		},
		{
			name: "a new pod is Pending",
			obj:  podSpec + "status: {phase: Pending, qosClass: BestEffort}\n",
			want: &State{Status: InProgress, Summary: "0/1 Pending", Message: "Pod is in the Pending phase"},
		},
		{
			name: "a ready pod is Running and Current",
			obj: podSpec + `status:
  phase: Running
  conditions: [{type: Ready, status: "True"}]
  containerStatuses: [{name: c, ready: true, restartCount: 0, state: {running: {startedAt: "2026-05-01T10:00:02Z"}}}]
`,
			want: &State{Status: Current, Summary: "1/1 Running", Message: "Pod is Ready"},
		},
		{
			name: "a crash-looping container is Failed and says CrashLoopBackOff",
			obj: podSpec + `status:
  phase: Running
  conditions: [{type: Ready, status: "False"}]
  containerStatuses: [{name: c, ready: false, restartCount: 5, state: {waiting: {reason: CrashLoopBackOff}}, lastState: {terminated: {exitCode: 137, reason: OOMKilled}}}]
`,
			want: &State{Status: Failed, Summary: "0/1 CrashLoopBackOff, 5 restarts", Message: "Containers in CrashLoop state: c"},
		},
		{
			name: "an image that cannot be pulled",
			obj: podSpec + `status:
  phase: Pending
  containerStatuses: [{name: c, ready: false, restartCount: 0, state: {waiting: {reason: ImagePullBackOff}}}]
`,
			want: &State{Status: InProgress, Summary: "0/1 ImagePullBackOff", Message: "Pod is in the Pending phase"},
		},
		{
			name: "a container killed for memory",
			obj: podSpec + `status:
  phase: Running
  containerStatuses: [{name: c, ready: false, restartCount: 1, state: {terminated: {exitCode: 137, reason: OOMKilled}}}]
`,
			want: &State{Status: InProgress, Summary: "0/1 OOMKilled, 1 restart", Message: "Pod is running but is not Ready"},
		},
		{
			name: "an init container still running",
			obj: `apiVersion: v1
kind: Pod
metadata: {name: web, creationTimestamp: "2026-05-01T10:00:00Z"}
spec: {initContainers: [{name: i, image: x}, {name: j, image: x}], containers: [{name: c, image: web:1}]}
status:
  phase: Pending
  initContainerStatuses: [{name: i, ready: false, restartCount: 0, state: {running: {}}}, {name: j, ready: false, restartCount: 0, state: {waiting: {reason: PodInitializing}}}]
`,
			want: &State{Status: InProgress, Summary: "0/1 Init:0/2", Message: "Pod is in the Pending phase"},
		},
		{
			name: "a pod being deleted",
			obj: `apiVersion: v1
kind: Pod
metadata: {name: web, creationTimestamp: "2026-05-01T10:00:00Z", deletionTimestamp: "2026-05-01T10:01:00Z", deletionGracePeriodSeconds: 30}
spec: {containers: [{name: c, image: web:1}]}
status:
  phase: Running
  conditions: [{type: Ready, status: "True"}]
  containerStatuses: [{name: c, ready: true, restartCount: 0, state: {running: {}}}]
`,
			want: &State{Status: Terminating, Summary: "1/1 Terminating", Message: "deletion requested; grace period 30s"},
		},
		{
			name: "an unschedulable pod within its 15 seconds",
			obj:  podSpec + "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n",
			at:   5 * time.Second,
			want: &State{Status: InProgress, Summary: "0/1 Pending", Message: "Pod has not been scheduled"},
		},
		{
			name: "an unschedulable pod after 15 seconds",
			obj:  podSpec + "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n",
			at:   time.Minute,
			want: &State{Status: Failed, Summary: "0/1 Pending", Message: "Pod could not be scheduled"},
		},
		{
			name: "a pod kstatus cannot read",
			obj:  podSpec + "status: {phase: Sideways}\n",
			want: &State{Status: Unknown, Summary: "0/1 Sideways", Message: "unknown phase Sideways"},
		},
		{
			name: "a deployment rolling out",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}
`,
			want: &State{Status: InProgress, Summary: "1/3 ready, 3 updated, 1 available", Message: "Available: 1/3"},
		},
		{
			name: "a deployment whose new generation is not observed yet",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 3}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3}
`,
			want: &State{Status: InProgress, Summary: "3/3 ready, 3 updated, 3 available", Message: "Deployment generation is 3, but latest observed generation is 2"},
		},
		{
			name: "a deployment rolled out",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 3}
status:
  observedGeneration: 2
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
`,
			want: &State{Status: Current, Summary: "3/3 ready, 3 updated, 3 available", Message: "Deployment is available. Replicas: 3"},
		},
		{
			name: "a deployment just created, before its controller saw it",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, generation: 1}\nspec: {replicas: 2}\n",
			want: &State{Status: InProgress, Summary: "0/2 ready, 0 updated, 0 available", Message: "Replicas: 0/2"},
		},
		{
			name: "an old ReplicaSet scaled to zero, its pods still there",
			obj: `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, generation: 3}
spec: {replicas: 0}
status: {observedGeneration: 3, replicas: 2, readyReplicas: 2, availableReplicas: 2}
`,
			want: &State{Status: InProgress, Summary: "2/0 ready, 2 available, 2 current", Message: "Pending termination: 2"},
		},
		{
			name: "a StatefulSet",
			obj: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, generation: 1}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, currentReplicas: 2, currentRevision: a, updateRevision: a}
`,
			want: &State{Status: Current, Summary: "2/2 ready, 2 updated, 2 available", Message: "All replicas scheduled as expected. Replicas: 2"},
		},
		{
			name: "a DaemonSet",
			obj: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, generation: 1}
spec: {}
status: {observedGeneration: 1, desiredNumberScheduled: 2, currentNumberScheduled: 2, updatedNumberScheduled: 2, numberReady: 1, numberAvailable: 1}
`,
			want: &State{Status: InProgress, Summary: "1/2 ready, 2 updated, 1 available", Message: "Available: 1/2"},
		},
		{
			name: "a Job done",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: once, generation: 1}
spec: {completions: 1, parallelism: 1}
status: {succeeded: 1, conditions: [{type: Complete, status: "True"}]}
`,
			want: &State{Status: Current, Summary: "1/1 completions, Complete", Message: "Job Completed. succeeded: 1/1"},
		},
		{
			// kstatus reads a started Job as Current: it is doing what it was asked to.
			name: "a Job running",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: many, generation: 1}
spec: {completions: 3, parallelism: 2}
status: {succeeded: 1, active: 2, failed: 1, startTime: "2026-05-01T10:00:00Z"}
`,
			want: &State{Status: Current, Summary: "1/3 completions, 2 active, 1 failed, Running", Message: "Job in progress. success:1, active: 2, failed: 1"},
		},
		{
			name: "a node Ready",
			obj:  "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {}\nstatus: {conditions: [{type: Ready, status: 'True', reason: KubeletReady}]}\n",
			want: &State{Status: Current, Summary: "Ready", Message: "Resource is Ready"},
		},
		{
			name: "a node NotReady and cordoned",
			obj:  "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {unschedulable: true}\nstatus: {conditions: [{type: Ready, status: 'False', reason: KubeletNotReady, message: PLEG is not healthy}]}\n",
			want: &State{Status: InProgress, Summary: "NotReady,SchedulingDisabled", Message: "PLEG is not healthy"},
		},
		{
			name: "a Namespace",
			obj:  "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\nspec: {finalizers: [kubernetes]}\nstatus: {phase: Active}\n",
			want: &State{Status: Current, Summary: "Active", Message: "Resource is current"},
		},
		{
			name:    "a custom resource's printer columns",
			columns: widgetColumns,
			obj: `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 4, creationTimestamp: "2026-05-01T10:00:00Z"}
spec: {replicas: 3, paused: false, owner: team-a}
status: {observedGeneration: 4, ratio: 0.5, conditions: [{type: Ready, status: "False", reason: Waiting, message: waiting for the database}]}
`,
			want: &State{Status: InProgress, Summary: "Ready=False, Replicas=3, Ratio=0.5, Paused=false", Message: "waiting for the database"},
		},
		{
			name:    "a custom resource without status: its spec columns, and kstatus says Current",
			columns: widgetColumns,
			obj:     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, generation: 1}\nspec: {replicas: 2}\n",
			want:    &State{Status: Current, Summary: "Replicas=2", Message: "Resource is current"},
		},
		{
			name:    "a custom resource whose columns find nothing and without status has no state",
			columns: widgetColumns,
			obj:     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {color: red}\n",
		},
		{
			name: "a custom resource with the kstatus Stalled condition",
			obj:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {conditions: [{type: Stalled, status: 'True', reason: Quota, message: over quota}]}\n",
			want: &State{Status: Failed, Message: "over quota"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewReader(tt.columns).Of(obj(t, tt.obj), created.Add(tt.at))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Of() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOfNil(t *testing.T) {
	if got := NewReader(nil).Of(nil, created); got != nil {
		t.Errorf("Of(nil) = %+v, want nil", got)
	}
}

func TestWide(t *testing.T) {
	tests := []struct {
		name    string
		obj     string
		columns []discovery.PrinterColumn
		want    []Field
	}{
		{
			name: "an unbound pod's IP",
			obj:  podSpec + "status: {phase: Running, podIP: 10.0.0.7}\n",
			want: []Field{{"ip", "10.0.0.7"}},
		},
		{
			name: "a bound pod",
			obj: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {nodeName: kwok-1, containers: [{name: c, image: web:1}]}
status: {phase: Running, podIPs: [{ip: 10.0.0.7}]}
`,
			want: []Field{{"node", "kwok-1"}, {"ip", "10.0.0.7"}},
		},
		{
			name: "a deployment's images",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: [{name: a, image: web:2}, {name: b, image: sidecar:1}]}}}\n",
			want: []Field{{"images", "web:2,sidecar:1"}},
		},
		{
			name: "a node's address and kubelet",
			obj:  "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {addresses: [{type: Hostname, address: node-1}, {type: InternalIP, address: 10.1.2.3}], nodeInfo: {kubeletVersion: fake}}\n",
			want: []Field{{"internal-ip", "10.1.2.3"}, {"version", "fake"}},
		},
		{
			name:    "a custom resource's columns of priority above 0",
			columns: widgetColumns,
			obj:     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2, owner: team-a}\n",
			want:    []Field{{"Owner", "team-a"}},
		},
		{
			name: "a ConfigMap has none",
			obj:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewReader(tt.columns).Wide(obj(t, tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Wide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkOf measures a running pod's state, what the printer reads for every pod line.
func BenchmarkOf(b *testing.B) {
	pod := obj(b, podSpec+`status:
  phase: Running
  conditions: [{type: Ready, status: "True"}]
  containerStatuses: [{name: c, ready: true, restartCount: 0, state: {running: {startedAt: "2026-05-01T10:00:02Z"}}}]
`)
	r := NewReader(nil)
	for b.Loop() {
		r.Of(pod, created)
	}
}
