package state

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// builtinSummary is the summary of a built-in kind, or "".
func builtinSummary(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	_, hasSpec := obj.Object["spec"]
	_, hasStatus := obj.Object["status"]
	if !hasSpec && !hasStatus { // --metadata-only: nothing to read
		return ""
	}
	switch gk.Group + "/" + gk.Kind {
	case "/Pod":
		var pod corev1.Pod
		if !hasStatus || convert(obj, &pod) != nil {
			return ""
		}
		return podSummary(&pod)
	case "apps/Deployment":
		if d, ok := as[appsv1.Deployment](obj); ok {
			return rollout(d.Status.ReadyReplicas, desired(d.Spec.Replicas), d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
		}
	case "apps/StatefulSet":
		if ss, ok := as[appsv1.StatefulSet](obj); ok {
			return rollout(ss.Status.ReadyReplicas, desired(ss.Spec.Replicas), ss.Status.UpdatedReplicas, ss.Status.AvailableReplicas)
		}
	case "apps/DaemonSet":
		if ds, ok := as[appsv1.DaemonSet](obj); ok {
			s := ds.Status
			return rollout(s.NumberReady, s.DesiredNumberScheduled, s.UpdatedNumberScheduled, s.NumberAvailable)
		}
	case "apps/ReplicaSet":
		var rs appsv1.ReplicaSet
		if convert(obj, &rs) != nil {
			return ""
		}
		return replicaSetSummary(&rs)
	case "batch/Job":
		var j batchv1.Job
		if convert(obj, &j) != nil {
			return ""
		}
		return jobSummary(&j)
	case "/Node":
		var n corev1.Node
		if !hasStatus || convert(obj, &n) != nil {
			return ""
		}
		return nodeSummary(&n)
	case "/Namespace", "/PersistentVolumeClaim", "/PersistentVolume":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		return phase
	}
	return ""
}

// builtinWide is a built-in kind's -o wide columns, or nil.
func builtinWide(obj *unstructured.Unstructured) []Field {
	gk := obj.GroupVersionKind().GroupKind()
	var out []Field
	add := func(name, value string) {
		if value != "" {
			out = append(out, Field{name, value})
		}
	}
	switch gk.Group + "/" + gk.Kind {
	case "/Pod":
		var pod corev1.Pod
		if convert(obj, &pod) != nil {
			return nil
		}
		add("node", pod.Spec.NodeName)
		if len(pod.Status.PodIPs) > 0 {
			add("ip", pod.Status.PodIPs[0].IP)
		} else {
			add("ip", pod.Status.PodIP)
		}
	case "apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "batch/Job":
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		var images []string
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			if img, _ := cm["image"].(string); img != "" {
				images = append(images, img)
			}
		}
		add("images", strings.Join(images, ","))
	case "/Node":
		var n corev1.Node
		if convert(obj, &n) != nil {
			return nil
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				add("internal-ip", a.Address)
				break
			}
		}
		add("version", n.Status.NodeInfo.KubeletVersion)
	}
	return out
}

func convert(obj *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
}

// as converts obj to a typed T; false when it does not fit.
func as[T any](obj *unstructured.Unstructured) (*T, bool) {
	var t T
	return &t, convert(obj, &t) == nil
}

// rollout is a workload's progress, in the same words for Deployments, StatefulSets and
// DaemonSets.
func rollout(ready, want, updated, available int32) string {
	return fmt.Sprintf("%d/%d ready, %d updated, %d available", ready, want, updated, available)
}

// replicaSetSummary is a ReplicaSet's ready and available replicas against its desired ones.
func replicaSetSummary(rs *appsv1.ReplicaSet) string {
	s, want := rs.Status, desired(rs.Spec.Replicas)
	out := fmt.Sprintf("%d/%d ready, %d available", s.ReadyReplicas, want, s.AvailableReplicas)
	if s.Replicas != want {
		out += fmt.Sprintf(", %d current", s.Replicas)
	}
	return out
}

// desired is spec.replicas, which the controllers default to 1.
func desired(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

// podSummary is kubectl's READY, STATUS and RESTARTS columns of a pod (printPod in
// k8s.io/kubernetes/pkg/printers/internalversion, without the times): `1/1 Running`,
// `0/1 CrashLoopBackOff, 5 restarts`, `0/1 Init:0/2`, `1/1 Terminating`.
func podSummary(pod *corev1.Pod) string {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			total++
		}
	}
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				ready++
			}
			continue
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || podInitialized(pod) {
		reason, ready, restarts = containerStatuses(pod, reason, ready, sidecarRestarts)
	}
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}
	if reason == "" {
		reason = "Pending"
	}
	s := fmt.Sprintf("%d/%d %s", ready, total, reason)
	switch {
	case restarts == 1:
		s += ", 1 restart"
	case restarts > 1:
		s += fmt.Sprintf(", %d restarts", restarts)
	}
	return s
}

// containerStatuses adds the app containers to a pod's ready count and restarts (from the
// sidecars'), and finds its reason as kubectl does: the last container's that says one.
func containerStatuses(pod *corev1.Pod, reason string, ready, restarts int) (string, int, int) {
	hasRunning := false
	errorReason := ""
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		restarts += int(c.RestartCount)
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			t := c.State.Terminated
			switch {
			case t.Reason != "":
				reason = t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			}
			if t.ExitCode != 0 {
				errorReason = reason
			}
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			ready++
		}
	}
	if reason == "Completed" {
		switch {
		case hasRunning && podReady(pod):
			reason = "Running"
		case errorReason != "":
			reason = errorReason
		case hasRunning:
			reason = "NotReady"
		}
	}
	return reason, ready, restarts
}

func podInitialized(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// jobSummary is kubectl's COMPLETIONS and STATUS of a job: `1/1 completions, Complete`,
// `0/3 completions, 2 active, Running`.
func jobSummary(j *batchv1.Job) string {
	var parts []string
	if j.Spec.Completions != nil {
		parts = append(parts, fmt.Sprintf("%d/%d completions", j.Status.Succeeded, *j.Spec.Completions))
	} else {
		parts = append(parts, fmt.Sprintf("%d succeeded", j.Status.Succeeded))
	}
	if j.Status.Active > 0 {
		parts = append(parts, fmt.Sprintf("%d active", j.Status.Active))
	}
	if j.Status.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", j.Status.Failed))
	}
	status := "Running"
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuspended:
			status = string(c.Type)
		}
	}
	return strings.Join(append(parts, status), ", ")
}

// nodeSummary is kubectl's STATUS of a node: Ready, NotReady or Unknown, and
// SchedulingDisabled when cordoned.
func nodeSummary(n *corev1.Node) string {
	s := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch c.Status {
		case corev1.ConditionTrue:
			s = "Ready"
		case corev1.ConditionFalse:
			s = "NotReady"
		}
	}
	if n.Spec.Unschedulable {
		s += ",SchedulingDisabled"
	}
	return s
}
