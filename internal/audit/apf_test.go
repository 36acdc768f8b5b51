package audit

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// schema is a FlowSchema of one rule: subjects, and resource or non-resource rules.
func schema(name string, precedence int32, level string, subjects []flowcontrolv1.Subject, res []flowcontrolv1.ResourcePolicyRule, nonRes []flowcontrolv1.NonResourcePolicyRule) flowcontrolv1.FlowSchema {
	return flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level}, MatchingPrecedence: precedence,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: subjects, ResourceRules: res, NonResourceRules: nonRes}}}}
}

func group(g string) []flowcontrolv1.Subject {
	return []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: g}}}
}

var (
	everyResource = []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}}
	everyPath     = []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
)

// A request is put where the API server's Priority and Fairness puts it: the first matching
// FlowSchema by matchingPrecedence, then name; a rule matches by one subject (user, group,
// service account) and one resource rule (verb, group, resource/subresource, namespace or
// cluster scope) or non-resource rule (a path, or a prefix). The schemas are shaped like the
// API server's suggested ones, and one of a user's own.
func TestFlowSchemasClassify(t *testing.T) {
	f := NewFlowSchemas([]flowcontrolv1.FlowSchema{
		schema("catch-all", 10000, "catch-all", group("*"), everyResource, everyPath),
		schema("global-default", 9900, "global-default", group("system:authenticated"), everyResource, everyPath),
		schema("service-accounts", 9000, "workload-low", group("system:serviceaccounts"), everyResource, everyPath),
		schema("poller", 500, "poller-level", []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "poller"}}},
			[]flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps", "pods/status"}, Namespaces: []string{"demo"}}}, nil),
		schema("probes", 2, "exempt", group("system:unauthenticated"), nil,
			[]flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz"}}}),
		schema("exempt", 1, "exempt", group("system:masters"), everyResource, everyPath),
	})
	obj := func(verb, group, res, sub, ns string) *Event {
		return &Event{Verb: verb, ObjectRef: &ObjectRef{APIGroup: group, Resource: res, Subresource: sub, Namespace: ns}}
	}
	user := func(e *Event, name string, groups ...string) *Event {
		e.User = UserInfo{Username: name, Groups: groups}
		return e
	}
	for _, tt := range []struct {
		name     string
		e        *Event
		fs, want string
	}{
		{"the poller's GET in demo", user(obj("get", "", "configmaps", "", "demo"), "poller", "system:authenticated"), "poller", "poller-level"},
		{"the poller's status GET", user(obj("get", "", "pods", "status", "demo"), "poller", "system:authenticated"), "poller", "poller-level"},
		{"the poller's LIST: not its rule's verb", user(obj("list", "", "configmaps", "", "demo"), "poller", "system:authenticated"), "global-default", "global-default"},
		{"the poller in another namespace", user(obj("get", "", "configmaps", "", "other"), "poller", "system:authenticated"), "global-default", "global-default"},
		{"a service account", user(obj("list", "apps", "deployments", "", ""), "system:serviceaccount:kube-system:replicaset-controller", "system:serviceaccounts", "system:authenticated"), "service-accounts", "workload-low"},
		{"an admin", user(obj("delete", "", "pods", "", "demo"), "admin", "system:masters", "system:authenticated"), "exempt", "exempt"},
		{"a probe of a path under /readyz", user(&Event{Verb: "get", Path: "/readyz/etcd"}, "system:anonymous", "system:unauthenticated"), "probes", "exempt"},
		{"an anonymous resource request", user(obj("get", "", "pods", "", "demo"), "system:anonymous", "system:unauthenticated"), "catch-all", "catch-all"},
	} {
		if fs, pl := f.Classify(tt.e); fs != tt.fs || pl != tt.want {
			t.Errorf("%s: %s, %s; want %s, %s", tt.name, fs, pl, tt.fs, tt.want)
		}
	}
	// Impersonation: the request is classified as the user it acts as.
	e := user(obj("get", "", "configmaps", "", "demo"), "admin", "system:masters")
	e.ImpersonatedUser = &UserInfo{Username: "poller", Groups: []string{"system:authenticated"}}
	if fs, _ := f.Classify(e); fs != "poller" {
		t.Errorf("an impersonated request in %s, want the impersonated user's poller", fs)
	}
	if fs, pl := (*FlowSchemas)(nil).Classify(e); fs != "" || pl != "" {
		t.Errorf("no FlowSchemas read: %q %q", fs, pl)
	}
}

// The 429s are counted by client and the priority level their requests are in; an eviction a
// PodDisruptionBudget refused is no throttling.
func TestLoadThrottlesByPriorityLevel(t *testing.T) {
	l := NewLoad(time.Minute)
	l.Flows = NewFlowSchemas([]flowcontrolv1.FlowSchema{schema("global-default", 9900, "global-default", group("system:authenticated"), everyResource, everyPath)})
	at := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	// A PodDisruptionBudget's refusal of an eviction is a 429 too, and no throttling.
	evict := &Event{AuditID: "evict", Stage: StageResponseComplete, Verb: "create", UserAgent: "kubectl/1",
		User: UserInfo{Username: "poller", Groups: []string{"system:authenticated"}}, ObjectRef: &ObjectRef{Resource: "pods", Subresource: "eviction", Namespace: "demo", Name: "p"},
		RequestReceived: at}
	evict.ResponseStatus = &struct {
		Code int `json:"code"`
	}{429}
	l.Add(evict)
	for i, code := range []int{429, 429, 200, 429} {
		e := &Event{AuditID: string(rune('a' + i)), Stage: StageResponseComplete, Verb: "get", UserAgent: "poll/1",
			User: UserInfo{Username: "poller", Groups: []string{"system:authenticated"}}, ObjectRef: &ObjectRef{Resource: "configmaps", Namespace: "demo"},
			RequestReceived: at.Add(time.Duration(i) * time.Second)}
		e.ResponseStatus = &struct {
			Code int `json:"code"`
		}{code}
		l.Add(e)
	}
	r := l.Rank()
	if len(r.Throttles) != 1 || r.Throttles[0].PriorityLevel != "global-default" || r.Throttles[0].FlowSchema != "global-default" ||
		r.Throttles[0].User != "poller" || r.Throttles[0].Requests != 3 {
		t.Errorf("throttles %+v; want poller's 3 429s in global-default", r.Throttles)
	}
}
