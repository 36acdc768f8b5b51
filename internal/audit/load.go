package audit

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/redact"
)

// Bounds of what a Load keeps.
const (
	// maxKeys bounds the clients, verb/resource pairs and heavy lists counted, each; past it the
	// requests of new ones are counted under "(others)".
	maxKeys = 10000
	// maxLongRunning bounds the watches remembered between their start and their end.
	maxLongRunning = 1 << 17
)

// Others is the key past maxKeys.
const Others = "(others)"

// Load counts who hits the API server, reads included: every request of the audit log once
// (when its response completed; a watch or another long-running request when it started), in
// one-second buckets by the audit log's clock over a sliding window. Pure; not safe for
// concurrent use.
type Load struct {
	Window  time.Duration
	clients map[Client]*series
	verbs   map[VerbResource]*series
	heavy   map[HeavyList]*series
	// throttles counts the 429s by client and the flow schema and priority level Flows puts
	// their requests in.
	throttles map[Throttle]*series
	// Flows classifies a 429's request (nil: its priority level is not known).
	Flows   *FlowSchemas
	started map[string]bool // auditIDs of long-running requests counted at their start
	first   time.Time
	newest  time.Time
}

// Client is who made requests: the acting user (the impersonated one when there is one) and
// the user agent.
type Client struct {
	User, UserAgent string
}

// VerbResource is a verb on a resource (resource[.group][/subresource]), or on a path of the
// API server that is no resource (/healthz).
type VerbResource struct {
	Verb, Resource string
}

// HeavyList is a client's LIST that the API server serves at a cost: from etcd (no
// resourceVersion), across every namespace, or in one response (no limit).
type HeavyList struct {
	Client      Client
	Resource    string
	ClusterWide bool
	NoRV        bool
	Unpaginated bool
}

// Throttle is a client's requests the API server answered 429, by the flow schema and priority
// level its requests are in ("" when not known).
type Throttle struct {
	Client
	FlowSchema, PriorityLevel string
}

// counts are a second's (or a window's) requests.
type counts struct {
	Requests, Reads, Writes, Throttled, Failed int
}

func (c *counts) add(o counts) {
	c.Requests += o.Requests
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.Throttled += o.Throttled
	c.Failed += o.Failed
}

type bucket struct {
	sec int64
	counts
}

type series struct{ buckets []bucket }

// NewLoad returns a Load over a sliding window.
func NewLoad(window time.Duration) *Load {
	return &Load{Window: window, clients: map[Client]*series{}, verbs: map[VerbResource]*series{}, heavy: map[HeavyList]*series{},
		throttles: map[Throttle]*series{}, started: map[string]bool{}}
}

// Add counts one audit event.
func (l *Load) Add(e *Event) {
	if !l.counts(e) {
		return
	}
	at := e.RequestReceived
	if at.IsZero() {
		at = e.StageTime
	}
	if l.first.IsZero() || at.Before(l.first) {
		l.first = at
	}
	if at.After(l.newest) {
		l.newest = at
	}
	c := counts{Requests: 1}
	switch {
	case isRead(e.Verb):
		c.Reads = 1
	case isWrite(e.Verb):
		c.Writes = 1
	}
	// A 429 is Priority and Fairness's (or max-in-flight's) refusal, but for an eviction a
	// PodDisruptionBudget refused: that one was not throttled.
	throttled := e.Code() == 429 && !isEviction(e)
	if throttled {
		c.Throttled = 1
	}
	if e.Code() >= 500 || e.Stage == StagePanic {
		c.Failed = 1
	}
	sec := at.Unix()
	client := Client{User: e.By(), UserAgent: e.UserAgent}
	res := resourceOf(e)
	addTo(l.clients, client, Client{User: Others}, sec, c)
	addTo(l.verbs, VerbResource{e.Verb, res}, VerbResource{Others, Others}, sec, c)
	if throttled {
		fs, pl := l.Flows.Classify(e)
		addTo(l.throttles, Throttle{client, fs, pl}, Throttle{Client: Client{User: Others}}, sec, c)
	}
	if e.Verb == "list" && e.ObjectRef != nil {
		h := HeavyList{Client: client, Resource: res, ClusterWide: e.ObjectRef.Namespace == "", NoRV: !e.HasResourceVersion, Unpaginated: e.Limit == 0}
		if h.ClusterWide || h.NoRV || h.Unpaginated {
			addTo(l.heavy, h, HeavyList{Client: Client{User: Others}, Resource: Others}, sec, c)
		}
	}
}

// counts reports whether an event is the one of its request that is counted: a completed (or
// panicked) request, but a long-running one (a watch) counted when its response started.
func (l *Load) counts(e *Event) bool {
	switch e.Stage {
	case StageResponseStarted:
		if len(l.started) >= maxLongRunning {
			clear(l.started) // a watch ending after this is counted twice
		}
		l.started[e.AuditID] = true
		return true
	case StageResponseComplete, StagePanic:
		if l.started[e.AuditID] {
			delete(l.started, e.AuditID)
			return false
		}
		return true
	}
	return false
}

func addTo[K comparable](m map[K]*series, k, others K, sec int64, c counts) {
	s := m[k]
	if s == nil {
		if len(m) >= maxKeys {
			k = others
			if s = m[k]; s == nil {
				s = &series{}
				m[k] = s
			}
		} else {
			s = &series{}
			m[k] = s
		}
	}
	if n := len(s.buckets); n > 0 && s.buckets[n-1].sec == sec {
		s.buckets[n-1].add(c)
		return
	}
	// Lines come nearly in time order: a late one goes into its second's bucket.
	i, found := slices.BinarySearchFunc(s.buckets, sec, func(b bucket, sec int64) int { return cmp.Compare(b.sec, sec) })
	if found {
		s.buckets[i].add(c)
		return
	}
	s.buckets = slices.Insert(s.buckets, i, bucket{sec: sec, counts: c})
}

func isRead(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// resourceOf names what a request was about: resource[.group][/subresource], or the path of a
// request that is about no resource.
func resourceOf(e *Event) string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		// A path is shown: a token in it (a JWT) is masked as the -v logs mask one.
		return redact.Text(e.Path)
	}
	s := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		s += "." + e.ObjectRef.APIGroup
	}
	if e.ObjectRef.Subresource != "" {
		s += "/" + e.ObjectRef.Subresource
	}
	return s
}

// LoadRanking is who hit the API server over the window, busiest first.
type LoadRanking struct {
	// At is the newest request's time (the audit log's clock); the window ends there.
	At time.Time
	// Window is the span counted: from the start of the window's first second (or of the log's
	// first request) to At; at most a second shorter than the window asked for.
	Window        time.Duration
	Total         Figures
	Clients       []ClientLoad
	VerbResources []VerbResourceLoad
	Heavy         []HeavyLoad
	// Throttles are the 429s by client, flow schema and priority level, most first.
	Throttles []ThrottleLoad
}

// ThrottleLoad is one client's 429s in one priority level.
type ThrottleLoad struct {
	Throttle
	Figures
}

// Figures are a window's requests, and Rate its requests per second.
type Figures struct {
	Requests, Reads, Writes, Throttled, Failed int
	Rate                                       float64
}

// ClientLoad is one client's requests.
type ClientLoad struct {
	Client
	Figures
}

// VerbResourceLoad is one verb's requests on one resource.
type VerbResourceLoad struct {
	VerbResource
	Figures
}

// HeavyLoad is one kind of costly LIST by one client.
type HeavyLoad struct {
	HeavyList
	Figures
}

// Rank returns the ranking of the window ending at the newest request, and drops the buckets
// before it.
func (l *Load) Rank() LoadRanking {
	r := LoadRanking{At: l.newest, Window: l.Window}
	if l.newest.IsZero() {
		return r
	}
	// The buckets after the second from are in the window: the span counted is from the start
	// of the first of them (or of the first request read) to the newest request.
	from := l.newest.Add(-l.Window).Unix()
	start := time.Unix(max(from+1, l.first.Unix()), 0)
	r.Window = max(l.newest.Sub(start), time.Second)
	secs := r.Window.Seconds()
	total := counts{}
	r.Clients = rank(l.clients, from, secs, func(k Client, f Figures) ClientLoad {
		total.add(counts{f.Requests, f.Reads, f.Writes, f.Throttled, f.Failed})
		return ClientLoad{k, f}
	})
	r.VerbResources = rank(l.verbs, from, secs, func(k VerbResource, f Figures) VerbResourceLoad { return VerbResourceLoad{k, f} })
	r.Heavy = rank(l.heavy, from, secs, func(k HeavyList, f Figures) HeavyLoad { return HeavyLoad{k, f} })
	r.Throttles = rank(l.throttles, from, secs, func(k Throttle, f Figures) ThrottleLoad { return ThrottleLoad{k, f} })
	slices.SortStableFunc(r.Heavy, func(a, b HeavyLoad) int { return cmp.Compare(heaviness(b), heaviness(a)) })
	r.Total = figures(total, secs)
	return r
}

// heaviness orders costly LISTs: each way a LIST costs more counts its requests once more.
func heaviness(h HeavyLoad) int {
	w := 1
	for _, b := range []bool{h.ClusterWide, h.NoRV, h.Unpaginated} {
		if b {
			w++
		}
	}
	return w * h.Requests
}

func figures(c counts, secs float64) Figures {
	return Figures{Requests: c.Requests, Reads: c.Reads, Writes: c.Writes, Throttled: c.Throttled, Failed: c.Failed, Rate: float64(c.Requests) / secs}
}

// rank sums each key's buckets after from (dropping the older ones, and keys left empty) and
// returns them busiest first.
func rank[K comparable, R any](m map[K]*series, from int64, secs float64, row func(K, Figures) R) []R {
	type kc struct {
		k K
		c counts
	}
	var all []kc
	for k, s := range m {
		i := 0
		for i < len(s.buckets) && s.buckets[i].sec <= from {
			i++
		}
		s.buckets = s.buckets[i:]
		if len(s.buckets) == 0 {
			delete(m, k)
			continue
		}
		var c counts
		for _, b := range s.buckets {
			c.add(b.counts)
		}
		all = append(all, kc{k, c})
	}
	slices.SortStableFunc(all, func(a, b kc) int { return cmp.Compare(b.c.Requests, a.c.Requests) })
	out := make([]R, len(all))
	for i, x := range all {
		out[i] = row(x.k, figures(x.c, secs))
	}
	return out
}

// isEviction reports whether e is a pods/eviction request (a 429 then means a
// PodDisruptionBudget refused it, not that the API server throttled it).
func isEviction(e *Event) bool {
	return e.ObjectRef != nil && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "eviction"
}
