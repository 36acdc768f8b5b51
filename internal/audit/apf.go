package audit

import (
	"cmp"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// FlowSchemas classify a request as the API server's Priority and Fairness does, from the
// cluster's FlowSchemas: the audit log does not say which priority level a request (a 429) was
// in. The matching is apiserver's (k8s.io/apiserver/pkg/util/flowcontrol), written again here
// because it is not exported: schemas in increasing matchingPrecedence (then name); a request is
// in the first whose rules match it, a rule matching when one of its subjects does and one of
// its resource or non-resource rules does. Immutable; safe for concurrent use.
type FlowSchemas struct {
	schemas []flowcontrolv1.FlowSchema
}

// NewFlowSchemas orders the cluster's FlowSchemas as the API server considers them.
func NewFlowSchemas(list []flowcontrolv1.FlowSchema) *FlowSchemas {
	s := slices.Clone(list)
	slices.SortStableFunc(s, func(a, b flowcontrolv1.FlowSchema) int {
		return cmp.Or(cmp.Compare(a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence), cmp.Compare(a.Name, b.Name))
	})
	return &FlowSchemas{schemas: s}
}

// Classify returns the flow schema and priority level of e's request; "" and "" when no schema
// matches (none read) or f is nil.
func (f *FlowSchemas) Classify(e *Event) (flowSchema, priorityLevel string) {
	if f == nil {
		return "", ""
	}
	user := e.User
	if e.ImpersonatedUser != nil && e.ImpersonatedUser.Username != "" {
		user = *e.ImpersonatedUser
	}
	for i := range f.schemas {
		fs := &f.schemas[i]
		if slices.ContainsFunc(fs.Spec.Rules, func(r flowcontrolv1.PolicyRulesWithSubjects) bool { return matchesRule(r, user, e) }) {
			return fs.Name, fs.Spec.PriorityLevelConfiguration.Name
		}
	}
	return "", ""
}

func matchesRule(r flowcontrolv1.PolicyRulesWithSubjects, user UserInfo, e *Event) bool {
	if !slices.ContainsFunc(r.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(s, user) }) {
		return false
	}
	if e.ObjectRef != nil && e.ObjectRef.Resource != "" {
		return slices.ContainsFunc(r.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool { return matchesResource(rr, e) })
	}
	return slices.ContainsFunc(r.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool { return matchesNonResource(nr, e) })
}

func matchesSubject(s flowcontrolv1.Subject, user UserInfo) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == user.Username)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(user.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		ns, name, ok := strings.Cut(ServiceAccount(user.Username), "/")
		return ok && ns == s.ServiceAccount.Namespace && (s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == name)
	}
	return false
}

// all reports whether list holds want, or is the wildcard alone (as the API server reads it:
// validation keeps "*" alone in its list).
func all(list []string, want string) bool {
	return len(list) == 1 && list[0] == "*" || slices.Contains(list, want)
}

func matchesResource(r flowcontrolv1.ResourcePolicyRule, e *Event) bool {
	o := e.ObjectRef
	res := o.Resource
	if o.Subresource != "" {
		res += "/" + o.Subresource
	}
	if !all(r.Verbs, e.Verb) || !all(r.APIGroups, o.APIGroup) || !all(r.Resources, res) {
		return false
	}
	if o.Namespace == "" {
		return r.ClusterScope
	}
	return all(r.Namespaces, o.Namespace)
}

func matchesNonResource(r flowcontrolv1.NonResourcePolicyRule, e *Event) bool {
	if !all(r.Verbs, e.Verb) {
		return false
	}
	for _, u := range r.NonResourceURLs {
		if u == "*" || u == e.Path {
			return true
		}
		// "/healthz/*" and "/healthz" both cover "/healthz/etcd", as the API server reads them.
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(e.Path, prefix) {
			return true
		}
	}
	return false
}
