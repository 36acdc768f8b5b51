package ctrllog

import (
	"strings"

	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"time"
	"unicode"
)

// ObjectRef is the object a line is about.
type ObjectRef struct {
	// Kind as the log names it: controller-runtime's controllerKind, or the key a klog
	// controller logs it under (deployment=, "Finished syncing deployment"); "" when unknown.
	Kind      string
	Namespace string
	Name      string
}

// Key is namespace/name (name alone for a cluster-scoped object), as cache keys are.
func (o ObjectRef) Key() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// refKeys are the keys klog controllers log an object under, in the order they are tried.
var refKeys = []string{"objectName", "objectRef", "objectReference", "key", "resourceName", "object", "obj"}

// objectOf finds the object a line is about, in every form real controllers log it:
// namespace+name (controller-runtime), <Kind>={"name","namespace"} (controller-runtime's
// kind key, klog's KObj/KRef in JSON), "ns/name" strings under objectName, objectRef, key,
// resourceName, or the kind's own name (deployment="demo/web"). kindHint is a kind named by the
// message ("Finished syncing deployment").
func objectOf(l *Line, kindHint string) (ObjectRef, bool) {
	kind := l.Str("controllerKind")
	if name := l.Str("name"); name != "" && kind != "" {
		return ObjectRef{Kind: kind, Namespace: l.Str("namespace"), Name: name}, true
	}
	if kind != "" {
		if r, ok := refValue(l.Fields[kind]); ok {
			r.Kind = kind
			return r, true
		}
	}
	if kindHint == "" {
		kindHint = l.Str("kind") // replicaset: "Finished syncing" kind="ReplicaSet" key="ns/name"
	}
	if kindHint != "" {
		for k, v := range l.Fields {
			if strings.EqualFold(k, kindHint) {
				if r, ok := refValue(v); ok {
					r.Kind = kindHint
					return r, true
				}
			}
		}
	}
	for _, k := range refKeys {
		if r, ok := refValue(l.Fields[k]); ok {
			r.Kind = kindHint
			return r, true
		}
	}
	if name := l.Str("name"); name != "" {
		return ObjectRef{Kind: kindHint, Namespace: l.Str("namespace"), Name: name}, true
	}
	return ObjectRef{}, false
}

// refValue reads {"name","namespace"} or "ns/name".
func refValue(v any) (ObjectRef, bool) {
	switch v := v.(type) {
	case map[string]any:
		name, _ := v["name"].(string)
		ns, _ := v["namespace"].(string)
		return ObjectRef{Namespace: ns, Name: name}, name != ""
	case string:
		if v == "" || strings.ContainsAny(v, " \t\"{}") {
			return ObjectRef{}, false
		}
		ns, name, found := strings.Cut(v, "/")
		if !found {
			return ObjectRef{Name: v}, true
		}
		if name == "" || strings.Contains(name, "/") {
			return ObjectRef{}, false
		}
		return ObjectRef{Namespace: ns, Name: name}, true
	}
	return ObjectRef{}, false
}

// Kind of a line, as the reconstruction sees it.
type lineKind int

const (
	kindOther        lineKind = iota // not about a reconcile
	kindInReconcile                  // a line logged inside a reconcile (it has a reconcileID)
	kindStart                        // "Reconciling"
	kindOK                           // "Reconcile successful"
	kindError                        // "Reconciler error"
	kindRequeue                      // "Reconcile done, requeueing"
	kindRequeueAfter                 // "Reconcile done, requeueing after 50ms"
	kindSynced                       // klog: "Successfully synced" (sample-controller)
	kindFinished                     // klog: "Finished syncing deployment" (may be followed by its error)
	kindSyncError                    // klog: "Error syncing deployment"
	kindSyncStart                    // klog: "Started syncing deployment" (not a reconcile by itself)
)

// classify says what a line is about and, for klog's sync lines, the kind the message names
// ("Finished syncing deployment" -> "deployment").
func classify(l *Line) (lineKind, string) {
	msg := l.Msg
	if l.Str("reconcileID") != "" {
		switch {
		case msg == "Reconciling":
			return kindStart, ""
		case msg == "Reconcile successful":
			return kindOK, ""
		case msg == "Reconciler error":
			return kindError, ""
		case strings.HasPrefix(msg, "Reconcile done, requeueing after"):
			return kindRequeueAfter, ""
		case msg == "Reconcile done, requeueing":
			return kindRequeue, ""
		}
		return kindInReconcile, ""
	}
	lower := strings.ToLower(msg)
	for _, p := range []struct {
		prefix string
		kind   lineKind
	}{
		{"finished syncing", kindFinished}, {"successfully synced", kindSynced}, {"synced", kindSynced},
		{"error syncing", kindSyncError}, {"started syncing", kindSyncStart},
	} {
		if strings.HasPrefix(lower, p.prefix) {
			return p.kind, firstWord(msg[len(p.prefix):])
		}
	}
	return kindOther, ""
}

// firstWord is the first word of s, a kind when it is one ("deployment" of " deployment"); ""
// for a word that is not a plain identifier ("%q").
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	w := strings.TrimRight(f[0], ":,")
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return ""
		}
	}
	return w
}

// requeueAfter reads the duration of "Reconcile done, requeueing after 50ms".
func requeueAfter(msg string) time.Duration {
	d, _ := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(msg, "Reconcile done, requeueing after")))
	return d
}

// errorText is the error a line carries (zap "error", klog "err").
func errorText(l *Line) string {
	if s := l.Str("error"); s != "" {
		return redact.Text(s)
	}
	return redact.Text(l.Str("err"))
}

// durationOf reads klog's duration="1.2ms" (or a number of seconds).
func durationOf(l *Line) (time.Duration, bool) {
	switch v := l.Fields["duration"].(type) {
	case string:
		d, err := time.ParseDuration(v)
		return d, err == nil
	case float64:
		return time.Duration(v * float64(time.Second)), true
	}
	return 0, false
}
