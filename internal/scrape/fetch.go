package scrape

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// DefaultTimeout bounds a scrape when Scraper.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxBodyBytes caps how much of a response is read; a controller's metrics page is far smaller
// (kube-controller-manager's is about 1 MiB).
const maxBodyBytes = 32 << 20

// acceptHeader asks for the classic text format, which promhttp serves whenever it is asked for.
// The wildcard keeps servers that cannot offer it from answering 406; Scrape also understands
// delimited protobuf and rejects OpenMetrics by name.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Scraper fetches one metrics endpoint.
type Scraper struct {
	URL    string       // e.g. http://127.0.0.1:8080/metrics
	Client *http.Client // nil means http.DefaultClient
	// Timeout bounds each scrape. Zero means DefaultTimeout; negative means no bound beyond the
	// context passed to Scrape.
	Timeout time.Duration
}

// Scrape fetches the endpoint once and parses its workqueue metrics. Errors are one line and
// start with "scrape <URL>: " (credentials in the URL are redacted).
func (s *Scraper) Scrape(ctx context.Context) ([]watch.QueueSample, error) {
	page, err := s.ScrapePage(ctx)
	return page.Queues, err
}

// ScrapePage is Scrape, also counting the page's metric families.
func (s *Scraper) ScrapePage(ctx context.Context) (Page, error) {
	page, err := s.scrape(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && s.Timeout >= 0 {
			// The scrape's own bound, not the caller's: say which (a slow or endless answer).
			err = fmt.Errorf("no complete answer within %s: %w", cmp.Or(s.Timeout, DefaultTimeout), err)
		}
		return Page{}, &scrapeError{url: redactURL(s.URL), err: err}
	}
	return page, nil
}

func (s *Scraper) scrape(ctx context.Context) (Page, error) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return Page{}, unwrapURLError(err)
	}
	req.Header.Set("Accept", acceptHeader)
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, unwrapURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Page{}, statusError(resp)
	}
	body := &limitedReader{r: resp.Body, n: maxBodyBytes}

	ct := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(ct)
	switch {
	case expfmt.ResponseFormat(resp.Header).FormatType() == expfmt.TypeProtoDelim:
		return parseProto(body)
	case mediaType == expfmt.ProtoType:
		return Page{}, fmt.Errorf("unsupported content type %q: only delimited protobuf is understood", ct)
	case mediaType == expfmt.OpenMetricsType:
		return Page{}, fmt.Errorf("unsupported content type %q: the server answered OpenMetrics although text/plain; version=0.0.4 was requested", ct)
	}
	// text/plain, or a server that does not label its answer: read it as the text format.
	return ParsePage(body)
}

// StatusError is a metrics server's answer other than 200 OK. Its message names the status and,
// when the server sent a short explanation (a 401 or 403 from an authenticating metrics server,
// say), its first line.
type StatusError struct {
	Code int
	msg  string
}

func (e *StatusError) Error() string { return e.msg }

// StatusCode returns the HTTP status of a failed scrape, or 0 when it failed otherwise.
func StatusCode(err error) int {
	if se, ok := errors.AsType[*StatusError](err); ok {
		return se.Code
	}
	return 0
}

func statusError(resp *http.Response) error {
	buf := make([]byte, 512)
	n, _ := io.ReadFull(resp.Body, buf)
	detail, _, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), "\n")
	detail = strings.TrimSpace(detail)
	if len(detail) > 120 {
		detail = detail[:120] + "..."
	}
	status := resp.Status
	if status == "" {
		status = fmt.Sprint(resp.StatusCode)
	}
	if detail == "" || !isPrintable(detail) {
		return &StatusError{Code: resp.StatusCode, msg: "unexpected status " + status}
	}
	return &StatusError{Code: resp.StatusCode, msg: "unexpected status " + status + ": " + detail}
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// unwrapURLError drops net/http's `Get "URL": ` prefix, since scrapeError names the URL itself.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// redactURL masks a password or a token in a URL (in its userinfo or its query).
func redactURL(raw string) string { return redact.URL(raw) }

type scrapeError struct {
	url string
	err error
}

func (e *scrapeError) Error() string {
	return oneLine("scrape " + e.url + ": " + redact.Text(e.err.Error()))
}
func (e *scrapeError) Unwrap() error { return e.err }

// oneLineError keeps a wrapped error's message on one line.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ").Replace(s)), " ")
}

// errBodyTooLarge is returned when a response exceeds maxBodyBytes.
var errBodyTooLarge = fmt.Errorf("response body exceeds %d MiB", maxBodyBytes>>20)

// limitedReader is io.LimitReader that fails instead of silently truncating.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// Probe one byte: an input of exactly the limit is fine.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// DefaultPollInterval is used by Poll when interval is not positive.
const DefaultPollInterval = 5 * time.Second

// Handlers are Poll's callbacks; nil ones are skipped.
type Handlers struct {
	// Page is called for each successful scrape.
	Page func(Page)
	// Error is called once per failure streak (the first failure after a success or at start),
	// and again within a streak when the failure changes kind (another HTTP status, or a status
	// instead of a connection error): a 403 after a refused connection is news.
	Error func(error)
	// Recovered is called when a scrape succeeds after a failure streak, before Page.
	Recovered func()
}

// Poll scrapes every interval until ctx is done and reports through h.
//
// The first scrape happens immediately; the next one starts interval after the previous one
// finished, so a slow endpoint is never scraped concurrently. Callbacks run on Poll's goroutine,
// one at a time. Nothing is reported once ctx is done (so cancelling does not surface as a
// failure), and Poll returns then.
func Poll(ctx context.Context, s *Scraper, interval time.Duration, h Handlers) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	failing := false
	lastKind := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		page, err := s.ScrapePage(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			kind := StatusCode(err)
			if (!failing || kind != lastKind) && h.Error != nil {
				h.Error(err)
			}
			failing, lastKind = true, kind
		default:
			if failing && h.Recovered != nil {
				h.Recovered()
			}
			failing = false
			if h.Page != nil {
				h.Page(page)
			}
		}
		timer.Reset(interval)
	}
}
