package apistats

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
)

// Header names of API Priority and Fairness (k8s.io/api/flowcontrol/v1).
const (
	HeaderFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	HeaderPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

// Wrap returns rt counting the tagged requests it carries (for rest.Config.WrapTransport).
// Unless the client disabled compression, it asks for gzip itself, as Go's transport would, and
// decompresses the body itself: then both the bytes that crossed the connection and the decoded
// bytes are known. Only the status, the size, Retry-After and the APF headers of a response are
// looked at; no request header is kept.
func (r *Recorder) Wrap(rt http.RoundTripper, disableCompression bool) http.RoundTripper {
	if r == nil {
		return rt
	}
	return &transport{rec: r, next: rt, gzip: !disableCompression}
}

type transport struct {
	rec  *Recorder
	next http.RoundTripper
	gzip bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	tg, ok := tagOf(req.Context())
	if !ok {
		return t.next.RoundTrip(req)
	}
	askedGzip := false
	if t.gzip && req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" && req.Method != http.MethodHead {
		req = req.Clone(req.Context())
		req.Header.Set("Accept-Encoding", "gzip")
		askedGzip = true
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	r := t.rec
	if err != nil {
		r.mu.Lock()
		r.get(tg.resource).requests[Request{Verb: tg.verb, Code: 0}]++
		r.mu.Unlock()
		return nil, err
	}
	apf := APF{FlowSchemaUID: resp.Header.Get(HeaderFlowSchemaUID), PriorityLevelUID: resp.Header.Get(HeaderPriorityLevelUID)}
	compressed := askedGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip")
	r.mu.Lock()
	c := r.get(tg.resource)
	c.requests[Request{Verb: tg.verb, Code: resp.StatusCode}]++
	if apf.FlowSchemaUID != "" || apf.PriorityLevelUID != "" {
		c.APF = apf
	}
	if compressed {
		c.CompressedResponses++
	}
	stream := tg.verb == VerbWatch && resp.StatusCode == http.StatusOK
	if stream {
		c.WatchStreams++
		c.WatchOpen++
		if c.watchOpened {
			c.Reconnects++
		}
		c.watchOpened = true
	}
	if tg.verb == VerbList && resp.StatusCode == http.StatusOK {
		c.ListPages++
	}
	var retryAfter time.Duration
	if resp.StatusCode == http.StatusTooManyRequests {
		c.Throttled++
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s >= 0 {
			retryAfter = time.Duration(s) * time.Second
			c.RetryAfter = max(c.RetryAfter, retryAfter)
		}
	}
	r.mu.Unlock()

	body := &countingBody{rec: r, resource: tg.resource, rc: resp.Body, wire: true, decodedToo: !compressed}
	if stream {
		body.onClose = func() {
			lived := time.Since(start)
			r.mu.Lock()
			defer r.mu.Unlock()
			c := r.get(tg.resource)
			c.WatchOpen--
			c.WatchesClosed++
			c.WatchLivedTotal += lived
			c.WatchLivedMax = max(c.WatchLivedMax, lived)
		}
	}
	resp.Body = body
	if compressed {
		resp.Body = newGunzipBody(body, &countingBody{rec: r, resource: tg.resource})
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		r.notify(Notice{Kind: NoticeTooManyRequests, Time: time.Now(), Resource: tg.resource, Verb: tg.verb,
			RetryAfter: retryAfter, APF: r.resolve(req.Context(), apf)})
	}
	return resp, nil
}

// countingBody counts what is read through it: as received (wire), as decoded, or both (a body
// that was not compressed).
type countingBody struct {
	rec        *Recorder
	resource   string
	rc         io.ReadCloser
	wire       bool
	decodedToo bool
	once       sync.Once
	onClose    func()
}

func (b *countingBody) add(n int) {
	if n <= 0 {
		return
	}
	b.rec.mu.Lock()
	c := b.rec.get(b.resource)
	if b.wire {
		c.BytesReceived += int64(n)
	}
	if !b.wire || b.decodedToo {
		c.BytesDecoded += int64(n)
	}
	b.rec.mu.Unlock()
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.add(n)
	if err != nil && b.onClose != nil {
		b.once.Do(b.onClose)
	}
	return n, err
}

func (b *countingBody) Close() error {
	if b.onClose != nil {
		b.once.Do(b.onClose)
	}
	return b.rc.Close()
}

// RateLimiter wraps the client's rate limiter (rest.Config.RateLimiter) to see how long it held
// each tagged request back.
func (r *Recorder) RateLimiter(inner flowcontrol.RateLimiter) flowcontrol.RateLimiter {
	if r == nil || inner == nil {
		return inner
	}
	return &rateLimiter{RateLimiter: inner, rec: r}
}

type rateLimiter struct {
	flowcontrol.RateLimiter
	rec *Recorder
}

func (l *rateLimiter) Wait(ctx context.Context) error {
	start := time.Now()
	err := l.RateLimiter.Wait(ctx)
	waited := time.Since(start)
	tg, ok := tagOf(ctx)
	if !ok || waited < time.Millisecond {
		return err
	}
	l.rec.mu.Lock()
	c := l.rec.get(tg.resource)
	c.ClientWaits++
	c.ClientWait += waited
	c.ClientWaitMax = max(c.ClientWaitMax, waited)
	l.rec.mu.Unlock()
	if waited >= ClientThrottleNotice {
		l.rec.notify(Notice{Kind: NoticeClientThrottled, Time: time.Now(), Resource: tg.resource, Verb: tg.verb, Delay: waited})
	}
	return err
}
