// Package apistats accounts for what the informers cost the API server: the requests they make
// (by verb and status code), the bytes and objects they receive, their watch streams, and the
// throttling they meet (client-side rate limiter, API Priority and Fairness). It sits in the
// HTTP transport (Wrap) and the client's rate limiter (RateLimiter); the tap of pkg/watch tags
// each request's context with its resource (WithResource) and reports lists and objects.
// It never prints and imports nothing of this project.
package apistats

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Verbs as the API server names them in its metrics and audit log.
const (
	VerbList  = "LIST"
	VerbWatch = "WATCH"
)

type ctxKey struct{}

type tag struct{ resource, verb string }

// WithResource tags a request's context: the request is the informer's LIST or WATCH (verb) of
// resource. Untagged requests (discovery, the plugin's own look-ups) are not counted.
func WithResource(ctx context.Context, resource, verb string) context.Context {
	return context.WithValue(ctx, ctxKey{}, tag{resource: resource, verb: verb})
}

func tagOf(ctx context.Context) (tag, bool) {
	t, ok := ctx.Value(ctxKey{}).(tag)
	return t, ok && t.resource != ""
}

// Request counts the responses of one verb and status code (Code 0: no response at all, the
// connection failed).
type Request struct {
	Verb  string `json:"verb"`
	Code  int    `json:"code"`
	Count int    `json:"count"`
}

// Snapshot is one resource's API figures since the run began.
type Snapshot struct {
	Resource string `json:"-"` // an ApiStats line's is its head's
	// Requests by verb and status code, sorted.
	Requests []Request `json:"requests"`
	// Lists: complete lists (a paginated LIST's last page, or a streaming list's
	// initial-events-end bookmark); ListPages: LIST responses (pages); LastListPages: pages of the
	// latest complete LIST.
	Lists         int `json:"lists"`
	ListPages     int `json:"listPages"`
	LastListPages int `json:"lastListPages"`
	// StreamingLists: complete lists that came as a streaming list (WATCH, sendInitialEvents).
	StreamingLists int `json:"streamingLists"`
	// BytesReceived: response bodies as they came over the connection (compressed when the server
	// compressed them); BytesDecoded: the same bodies after decompression, as decoded.
	// CompressedResponses: responses the server sent gzip-compressed.
	BytesReceived       int64 `json:"bytesReceived"`
	BytesDecoded        int64 `json:"bytesDecoded"`
	CompressedResponses int   `json:"compressedResponses"`
	// Objects: objects decoded from list pages and watch events (bookmarks not included).
	Objects   int64 `json:"objects"`
	Bookmarks int64 `json:"bookmarks"`
	// WatchStreams: WATCH requests that opened a stream; Reconnects: those after the first.
	// WatchOpen: streams open now. WatchLived*: how long the closed ones lived.
	WatchStreams    int           `json:"watchStreams"`
	Reconnects      int           `json:"watchReconnects"`
	WatchOpen       int           `json:"watchOpen"`
	WatchesClosed   int           `json:"watchesClosed"`
	WatchLivedTotal time.Duration `json:"watchLivedSeconds" unit:"s"`
	WatchLivedMax   time.Duration `json:"watchLivedMaxSeconds" unit:"s"`
	// Throttled: 429 responses (API Priority and Fairness, or a max-in-flight limit);
	// RetryAfter: the longest Retry-After they asked for.
	Throttled  int           `json:"throttled"`
	RetryAfter time.Duration `json:"retryAfterSeconds" unit:"s"`
	// ClientWaits: requests the client-side rate limiter delayed (by 1ms or more); ClientWait:
	// their total delay; ClientWaitMax: the longest.
	ClientWaits   int           `json:"clientWaits"`
	ClientWait    time.Duration `json:"clientWaitSeconds" unit:"s"`
	ClientWaitMax time.Duration `json:"clientWaitMaxSeconds" unit:"s"`
	// APF: the flow schema and priority level the server classified the requests in (the last
	// response's headers).
	APF APF `json:"-"` // on a line, its fields are the line's (watch.LineMembers)
	// Elapsed: since the recorder was created.
	Elapsed time.Duration `json:"elapsedSeconds" unit:"s"`
}

// Count returns the responses of verb (any code when code < 0).
func (s *Snapshot) Count(verb string, code int) int {
	n := 0
	for _, r := range s.Requests {
		if r.Verb == verb && (code < 0 || r.Code == code) {
			n += r.Count
		}
	}
	return n
}

// APF is API Priority and Fairness's classification of a request, from the
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID response headers.
type APF struct {
	FlowSchemaUID    string `json:"flowSchemaUID"`
	PriorityLevelUID string `json:"priorityLevelUID"`
	// FlowSchema and PriorityLevel are the names, when resolved; Note says why they are not
	// (e.g. the user may not list flowschemas).
	FlowSchema    string `json:"flowSchema"`
	PriorityLevel string `json:"priorityLevel"`
	Note          string `json:"apfNote"`
}

// Progress is a list running now (for the progress line of a long sync).
type Progress struct {
	Resource  string
	Streaming bool
	Pages     int
	Objects   int64
	Bytes     int64 // decoded bytes received since the list began
	Elapsed   time.Duration
}

// NoticeKind says what a Notice reports.
type NoticeKind string

// Notice kinds.
const (
	// NoticeTooManyRequests is a 429 response: the server (API Priority and Fairness, or a
	// max-in-flight limit) rejected a request.
	NoticeTooManyRequests NoticeKind = "TooManyRequests"
	// NoticeClientThrottled is a request the client-side rate limiter held back (by at least
	// ClientThrottleNotice).
	NoticeClientThrottled NoticeKind = "ClientThrottled"
)

// ClientThrottleNotice is the client-side delay worth a Notice: client-go logs delays from
// 50ms on (rest.longThrottleLatency).
const ClientThrottleNotice = 50 * time.Millisecond

// Notice is a throttling event, reported as it happens.
type Notice struct {
	Kind     NoticeKind
	Time     time.Time
	Resource string
	Verb     string
	// Delay: the client-side wait; RetryAfter: what a 429 asked for (0 when it did not say).
	Delay, RetryAfter time.Duration
	APF               APF
	Message           string // a 429's body, shortened
}

// counters is one resource's live figures.
type counters struct {
	Snapshot
	requests    map[Request]int // Count unused in the key
	watchOpened bool
	// the list running now
	listing     bool
	listStart   time.Time
	listBytes   int64
	listPages   int
	listObjects int64
	streaming   bool
}

// Recorder accounts for a run's API requests. Its methods are safe for concurrent use, and a nil
// Recorder does nothing.
type Recorder struct {
	// Resolve turns APF UIDs into names (internal/cmd reads flowschemas and prioritylevelconfigurations);
	// nil leaves them unresolved. Set before the first request.
	Resolve func(ctx context.Context, a APF) APF

	mu       sync.Mutex
	start    time.Time
	res      map[string]*counters
	order    []string
	notices  chan Notice
	lost     int
	resolved map[[2]string]APF
}

// NewRecorder returns a recorder whose clock starts now.
func NewRecorder() *Recorder {
	return &Recorder{start: time.Now(), res: map[string]*counters{}, notices: make(chan Notice, 256), resolved: map[[2]string]APF{}}
}

// Notices delivers throttling as it happens. Notices that find the channel full are counted
// (Lost) rather than block a request.
func (r *Recorder) Notices() <-chan Notice {
	if r == nil {
		return nil
	}
	return r.notices
}

// Lost returns how many notices were dropped because nobody read them.
func (r *Recorder) Lost() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

func (r *Recorder) notify(n Notice) {
	select {
	case r.notices <- n:
	default:
		r.mu.Lock()
		r.lost++
		r.mu.Unlock()
	}
}

// get returns resource's counters; r.mu must be held.
func (r *Recorder) get(resource string) *counters {
	c, ok := r.res[resource]
	if !ok {
		c = &counters{requests: map[Request]int{}}
		c.Resource = resource
		r.res[resource] = c
		r.order = append(r.order, resource)
	}
	return c
}

// Register makes resource appear in Snapshots before its first request.
func (r *Recorder) Register(resource string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get(resource)
}

// Snapshots returns every resource's figures, in the order they were registered, with the APF
// classification resolved to names when Resolve can.
func (r *Recorder) Snapshots() []Snapshot {
	if r == nil {
		return nil
	}
	out := r.snapshots()
	for i := range out {
		if a := out[i].APF; a.FlowSchemaUID != "" || a.PriorityLevelUID != "" {
			out[i].APF = r.resolve(context.Background(), a)
		}
	}
	return out
}

func (r *Recorder) snapshots() []Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Snapshot, 0, len(r.order))
	for _, name := range r.order {
		c := r.res[name]
		s := c.Snapshot
		s.Requests = nil
		for k, n := range c.requests {
			s.Requests = append(s.Requests, Request{Verb: k.Verb, Code: k.Code, Count: n})
		}
		slices.SortFunc(s.Requests, func(a, b Request) int {
			if a.Verb != b.Verb {
				if a.Verb < b.Verb {
					return -1
				}
				return 1
			}
			return a.Code - b.Code
		})
		s.Elapsed = time.Since(r.start)
		out = append(out, s)
	}
	return out
}

// Snapshot returns one resource's figures.
func (r *Recorder) Snapshot(resource string) (Snapshot, bool) {
	for _, s := range r.Snapshots() {
		if s.Resource == resource {
			return s, true
		}
	}
	return Snapshot{}, false
}

// Progress returns the lists running now.
func (r *Recorder) Progress() []Progress {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Progress
	for _, name := range r.order {
		c := r.res[name]
		if !c.listing {
			continue
		}
		out = append(out, Progress{Resource: name, Streaming: c.streaming, Pages: c.listPages, Objects: c.listObjects,
			Bytes: c.BytesDecoded - c.listBytes, Elapsed: time.Since(c.listStart)})
	}
	return out
}

// ListBegin notes that a list of resource began: a LIST's first page was asked for, or a
// streaming list's WATCH opened.
func (r *Recorder) ListBegin(resource string, streaming bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.get(resource)
	c.listing, c.streaming, c.listStart, c.listBytes, c.listPages, c.listObjects = true, streaming, time.Now(), c.BytesDecoded, 0, 0
}

// ListPage notes a LIST page of n objects.
func (r *Recorder) ListPage(resource string, n int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.get(resource)
	c.Objects += int64(n)
	c.listPages++
	c.listObjects += int64(n)
}

// ListEnd notes a complete list.
func (r *Recorder) ListEnd(resource string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.get(resource)
	c.Lists++
	if c.streaming {
		c.StreamingLists++
	} else {
		c.LastListPages = c.listPages
	}
	c.listing = false
}

// ListAbort notes a list that ended without completing (an error, a stopped stream).
func (r *Recorder) ListAbort(resource string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.get(resource).listing = false
}

// WatchObject notes an object (bookmark false) or a bookmark decoded from a watch stream.
func (r *Recorder) WatchObject(resource string, bookmark bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.get(resource)
	if bookmark {
		c.Bookmarks++
		return
	}
	c.Objects++
	if c.listing && c.streaming {
		c.listObjects++
	}
}

// APFOf returns the classification of resource's requests, resolved to names when Resolve can.
// It asks the API at most once per pair of UIDs.
func (r *Recorder) APFOf(ctx context.Context, resource string) (APF, bool) {
	if r == nil {
		return APF{}, false
	}
	r.mu.Lock()
	c, ok := r.res[resource]
	var a APF
	if ok {
		a = c.APF
	}
	r.mu.Unlock()
	if a.FlowSchemaUID == "" && a.PriorityLevelUID == "" {
		return APF{}, false
	}
	return r.resolve(ctx, a), true
}

func (r *Recorder) resolve(ctx context.Context, a APF) APF {
	key := [2]string{a.FlowSchemaUID, a.PriorityLevelUID}
	r.mu.Lock()
	got, ok := r.resolved[key]
	r.mu.Unlock()
	if ok {
		return got
	}
	if r.Resolve == nil {
		return a
	}
	got = r.Resolve(ctx, a)
	r.mu.Lock()
	r.resolved[key] = got
	r.mu.Unlock()
	return got
}
