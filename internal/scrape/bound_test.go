package scrape

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// pageOf is a reader of n lines made by line(i), without holding them all.
func pageOf(n int, line func(i int) string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for i := range n {
			if _, err := io.WriteString(pw, line(i)); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}

// B6: a hostile metrics page (a million series, a million families, a label of megabytes) is
// parsed within the bounds: unread families never reach the parser, and past a bound the scrape
// is an error saying which bound.
func TestParseBounds(t *testing.T) {
	tests := []struct {
		name     string
		page     io.Reader
		wantErr  string
		wantFams int
	}{
		{"a million unread series", pageOf(1_000_000, func(i int) string { return fmt.Sprintf("http_requests{path=\"/%d\"} 1\n", i) }), "", 1},
		{"a million unread families", pageOf(1_000_000, func(i int) string { return fmt.Sprintf("# TYPE m%d gauge\nm%d 1\n", i, i) }), "", 1_000_000},
		{"too many workqueue series", pageOf(MaxSeries+1, func(i int) string { return fmt.Sprintf("workqueue_depth{name=\"q%d\"} 1\n", i) }),
			fmt.Sprintf("more than %d workqueue and controller-runtime series on one page", MaxSeries), 0},
		{"a label of a megabyte", strings.NewReader("workqueue_depth{name=\"" + strings.Repeat("x", 1<<20) + "\"} 1\n"),
			"line 1: longer than 64 KiB", 0},
		{"too many bytes of workqueue series", pageOf(MaxSeries, func(i int) string {
			return fmt.Sprintf("workqueue_depth{name=\"q%d\",pad=\"%s\"} 1\n", i, strings.Repeat("p", 1000))
		}), "more than 8 MiB of workqueue and controller-runtime series", 0},
	}
	for _, tt := range tests {
		page, err := ParsePage(tt.page)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && (len(page.Queues) != 0 || page.Families != tt.wantFams):
			t.Errorf("%s: %d queues, %d families; want none, %d", tt.name, len(page.Queues), page.Families, tt.wantFams)
		}
	}
}
