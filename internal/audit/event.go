// Package audit reads the API server's audit log (JSON lines of audit.k8s.io/v1 Events, at any
// level from Metadata up) as a source: it joins each object line of the watch to the request
// that made it (who, with which client, which auditID), and counts who hits the API server how
// often, reads included (kubectl informer top --audit-log).
//
// An Event is decoded into a struct of its own with only the fields the join and the counts
// need: the request and response bodies of a RequestResponse-level event are skipped by the
// decoder (never held, so never printed, recorded or exported; a Secret's data included), only
// the response's metadata (name, resourceVersion) is read, and the requestURI is kept as its
// path and the two query parameters the counts read (no token in a query survives the parse).
package audit

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Event is what the join and the counts read of an audit.k8s.io/v1 Event.
type Event struct {
	Level   string `json:"level"`
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	// RequestURI is read and dropped by Parse: Path, ResourceVersion and Limit are what is kept.
	RequestURI       string    `json:"requestURI"`
	User             UserInfo  `json:"user"`
	ImpersonatedUser *UserInfo `json:"impersonatedUser"`
	UserAgent        string    `json:"userAgent"`
	ObjectRef        *ObjectRef
	ResponseStatus   *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// ResponseObject is only the response's metadata (RequestResponse level); its other fields
	// are skipped by the decoder.
	ResponseObject *struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"responseObject"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	StageTime       time.Time `json:"stageTimestamp"`

	// Path is RequestURI without its query.
	Path string `json:"-"`
	// HasResourceVersion: the query named a resourceVersion (a LIST served from the watch cache);
	// Limit: its limit (a paginated LIST), 0 when none.
	HasResourceVersion bool  `json:"-"`
	Limit              int64 `json:"-"`
}

// UserInfo is an audit event's user: its name and groups (what a FlowSchema matches; extra is
// not kept).
type UserInfo struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// ObjectRef is the object or collection a request was about.
type ObjectRef struct {
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
	Subresource string `json:"subresource"`
}

// Stages of an audit event that the join and the counts read.
const (
	StageResponseStarted  = "ResponseStarted"
	StageResponseComplete = "ResponseComplete"
	StagePanic            = "Panic"
)

// errNotAudit is a line that is JSON but no audit event.
var errNotAudit = errors.New("not an audit.k8s.io event (no auditID, stage or verb)")

// Parse decodes one line of an audit log. The requestURI is cut to its path and read for
// resourceVersion and limit, then dropped.
func Parse(line []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Event{}, err
	}
	if ev.AuditID == "" || ev.Stage == "" || ev.Verb == "" {
		return Event{}, errNotAudit
	}
	path, query, _ := strings.Cut(ev.RequestURI, "?")
	ev.RequestURI = ""
	ev.Path = path
	if query != "" {
		if q, err := url.ParseQuery(query); err == nil {
			ev.HasResourceVersion = q.Get("resourceVersion") != ""
			if l := q.Get("limit"); l != "" {
				ev.Limit = parseLimit(l)
			}
		}
	}
	return ev, nil
}

func parseLimit(s string) int64 {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' || n > 1<<40 {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// Code is the response's status code, 0 when the event has none (an earlier stage).
func (e *Event) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Succeeded reports whether the request was answered with a 2xx code.
func (e *Event) Succeeded() bool { return e.Code() >= 200 && e.Code() < 300 }

// By is who acted: the impersonated user when there is one, else the user.
func (e *Event) By() string {
	if e.ImpersonatedUser != nil && e.ImpersonatedUser.Username != "" {
		return e.ImpersonatedUser.Username
	}
	return e.User.Username
}

// ServiceAccount is "namespace/name" when the acting user is a service account, else "".
func ServiceAccount(user string) string {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return ""
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return ns + "/" + name
}

// Info is what an object line says of the audit event that made its write, matched as said.
func (e *Event) Info(matched string) *watch.AuditInfo {
	a := &watch.AuditInfo{User: e.User.Username, UserAgent: e.UserAgent, AuditID: e.AuditID, Verb: e.Verb, Matched: matched,
		ServiceAccount: ServiceAccount(e.By())}
	if e.ImpersonatedUser != nil {
		a.ImpersonatedUser = e.ImpersonatedUser.Username
	}
	if e.ObjectRef != nil {
		a.Subresource = e.ObjectRef.Subresource
	}
	return a
}

// responseRV is the response object's resourceVersion, "" below RequestResponse level or when
// the response is a Status.
func (e *Event) responseRV() string {
	if e.ResponseObject == nil {
		return ""
	}
	return e.ResponseObject.Metadata.ResourceVersion
}

// objectName is the name of the object a request wrote: the objectRef's, or the response's (a
// create with generateName names the object only in its response).
func (e *Event) objectName() string {
	if e.ObjectRef != nil && e.ObjectRef.Name != "" {
		return e.ObjectRef.Name
	}
	if e.ResponseObject != nil {
		return e.ResponseObject.Metadata.Name
	}
	return ""
}
