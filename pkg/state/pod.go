package state

import (
	"fmt"
	"strings"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	corev1 "k8s.io/api/core/v1"
)

// ofPod is Of for a pod as its Go type: kstatus's rules for pods (the generic ones, then the
// pod's), read from the struct instead of a map. False when the pod is one Of would tell apart
// by what the struct does not say (a zero deletionTimestamp, a summary that says nothing):
// OfTyped reads those through the map.
func ofPod(pod *corev1.Pod, summary string, at time.Time) (*State, bool) {
	if summary == "" || (pod.DeletionTimestamp != nil && pod.DeletionTimestamp.IsZero()) {
		return nil, false
	}
	s := &State{Summary: summary}
	res, err := podStatus(pod)
	switch {
	case err != nil:
		s.Status, s.Message = Unknown, err.Error()
	default:
		s.Status, s.Message = string(res.Status), res.Message
		unschedulable(s, res, pod.CreationTimestamp.Time, at)
	}
	if pod.DeletionTimestamp != nil {
		s.Status = Terminating
		s.Finalizers = pod.Finalizers
		s.Message = terminatingMessage(pod.Finalizers, pod.DeletionGracePeriodSeconds)
	}
	return s, true
}

// podStatus is kstatus.Compute of a pod: checkGenericProperties (deletion, generation,
// Reconciling and Stalled conditions), then podConditions, in kstatus's words.
func podStatus(pod *corev1.Pod) (*kstatus.Result, error) {
	if pod.DeletionTimestamp != nil {
		return &kstatus.Result{Status: kstatus.TerminatingStatus, Message: "Resource scheduled for deletion", Conditions: []kstatus.Condition{}}, nil
	}
	if g, og := pod.Generation, pod.Status.ObservedGeneration; g != 0 && og != 0 && og != g {
		msg := fmt.Sprintf("Pod generation is %d, but latest observed generation is %d", g, og)
		return inProgress("LatestGenerationNotObserved", msg), nil
	}
	for _, c := range pod.Status.Conditions {
		switch {
		case string(c.Type) == string(kstatus.ConditionReconciling) && c.Status == corev1.ConditionTrue:
			return inProgress(c.Reason, c.Message), nil
		case string(c.Type) == string(kstatus.ConditionStalled) && c.Status == corev1.ConditionTrue:
			return &kstatus.Result{Status: kstatus.FailedStatus, Message: c.Message, Conditions: []kstatus.Condition{
				{Type: kstatus.ConditionStalled, Status: corev1.ConditionTrue, Reason: c.Reason, Message: c.Message}}}, nil
		}
	}
	switch phase := pod.Status.Phase; phase {
	case corev1.PodSucceeded:
		return current("Pod has completed successfully"), nil
	case corev1.PodFailed:
		return current("Pod has completed, but not successfully"), nil
	case corev1.PodRunning:
		if podCondition(pod, corev1.PodReady, corev1.ConditionTrue) != nil {
			return current("Pod is Ready"), nil
		}
		var crashing []string
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				crashing = append(crashing, cs.Name)
			}
		}
		if len(crashing) > 0 {
			msg := "Containers in CrashLoop state: " + strings.Join(crashing, ",")
			return failed("ContainerCrashLooping", msg), nil
		}
		return inProgress("PodRunningNotReady", "Pod is running but is not Ready"), nil
	case corev1.PodPending:
		if c := podCondition(pod, corev1.PodScheduled, corev1.ConditionFalse); c != nil && c.Reason == "Unschedulable" {
			// kstatus's clock rule; Of's caller redoes it against the event's time.
			if time.Now().Add(-kstatus.ScheduleWindow).Before(pod.CreationTimestamp.Time) {
				return inProgress("PodNotScheduled", "Pod has not been scheduled"), nil
			}
			return failed("PodUnschedulable", "Pod could not be scheduled"), nil
		}
		return inProgress("PodPending", "Pod is in the Pending phase"), nil
	case "":
		return inProgress("PodNotObserved", "Pod phase not available"), nil
	default:
		return nil, fmt.Errorf("unknown phase %s", phase)
	}
}

// podCondition is the pod's first condition of type t with status st, as kstatus finds it.
func podCondition(pod *corev1.Pod, t corev1.PodConditionType, st corev1.ConditionStatus) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == t && c.Status == st {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func current(msg string) *kstatus.Result {
	return &kstatus.Result{Status: kstatus.CurrentStatus, Message: msg, Conditions: []kstatus.Condition{}}
}

func inProgress(reason, msg string) *kstatus.Result {
	return &kstatus.Result{Status: kstatus.InProgressStatus, Message: msg, Conditions: []kstatus.Condition{
		{Type: kstatus.ConditionReconciling, Status: corev1.ConditionTrue, Reason: reason, Message: msg}}}
}

func failed(reason, msg string) *kstatus.Result {
	return &kstatus.Result{Status: kstatus.FailedStatus, Message: msg, Conditions: []kstatus.Condition{
		{Type: kstatus.ConditionStalled, Status: corev1.ConditionTrue, Reason: reason, Message: msg}}}
}
