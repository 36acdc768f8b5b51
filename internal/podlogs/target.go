// Package podlogs reads the logs of a workload's pods through the API server, as `kubectl logs
// -f` does: the workload (deploy/NAME, sts/NAME, ds/NAME, rs/NAME, pod/NAME, any type kubectl
// resolves) is read once for its pod selector (kubectl's polymorphichelpers), its pods are
// watched by that selector, and each container of each pod is streamed from the pod log
// endpoint (client-go's GetLogs) until the pod is deleted. A broken stream is opened again from
// the timestamp of its last line, and the lines read before are not passed on twice.
package podlogs

import (
	"cmp"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubectl/pkg/polymorphichelpers"
)

// Target is a --controller-logs-from value: [NAMESPACE/]TYPE/NAME.
type Target struct {
	Namespace string // "" for the kubeconfig's (or -n's) namespace
	Ref       string // TYPE/NAME, e.g. deploy/my-controller-manager
}

func (t Target) String() string {
	if t.Namespace != "" {
		return t.Namespace + "/" + t.Ref
	}
	return t.Ref
}

// ParseTarget reads [NAMESPACE/]TYPE/NAME.
func ParseTarget(s string) (Target, error) {
	parts := strings.Split(s, "/")
	var t Target
	if len(parts) == 3 && parts[0] != "" {
		t.Namespace, parts = parts[0], parts[1:]
	}
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		// kubectl's words for a malformed TYPE/NAME, and the form this flag takes.
		return Target{}, fmt.Errorf("%q: arguments in resource/name form must have a single resource and name: want [NAMESPACE/]TYPE/NAME, e.g. my-system/deploy/my-controller-manager or pod/web-0", s)
	}
	t.Ref = parts[0] + "/" + parts[1]
	return t, nil
}

// Workload is a resolved Target: which pods to read.
type Workload struct {
	Namespace string
	// Name is how lines name it: TYPE/NAME as the server spells the type (deployment.apps/mgr).
	Name string
	// LabelSelector selects its pods; FieldSelector does for a pod named by itself.
	LabelSelector string
	FieldSelector string
}

// Resolve reads the target's object with the server (kubectl's resource builder: short names,
// TYPE.GROUP and kubectl's errors, e.g. `deployments.apps "x" not found`) and finds its pods'
// selector as kubectl logs does. defaultNamespace is -n's or the kubeconfig's.
func Resolve(getter genericclioptions.RESTClientGetter, defaultNamespace string, t Target) (Workload, error) {
	infos, err := resource.NewBuilder(getter).
		WithScheme(scheme.Scheme, scheme.Scheme.PrioritizedVersionsAllGroups()...).
		NamespaceParam(cmp.Or(t.Namespace, defaultNamespace)).DefaultNamespace().
		ResourceNames("pods", t.Ref).
		SingleResourceType().
		Do().Infos()
	if err != nil {
		return Workload{}, err
	}
	if len(infos) != 1 {
		return Workload{}, fmt.Errorf("%s: want one object, the server has %d", t.Ref, len(infos))
	}
	info := infos[0]
	w := Workload{Namespace: info.Namespace, Name: info.Mapping.Resource.GroupResource().String() + "/" + info.Name}
	if pod, ok := info.Object.(*corev1.Pod); ok {
		w.Name = "pod/" + pod.Name
		w.FieldSelector = fields.OneTermEqualSelector("metadata.name", pod.Name).String()
		return w, nil
	}
	ns, sel, err := polymorphichelpers.SelectorsForObject(info.Object)
	if err != nil {
		return Workload{}, fmt.Errorf("cannot read the pods of %s: %w", w.Name, err)
	}
	if sel.Empty() {
		return Workload{}, fmt.Errorf("%s selects every pod of its namespace (an empty selector): name one of its pods (pod/NAME)", w.Name)
	}
	w.Namespace, w.LabelSelector = ns, sel.String()
	return w, nil
}
