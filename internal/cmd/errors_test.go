package cmd

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func TestErrorLine(t *testing.T) {
	pods := &watch.ForbiddenError{Resource: "pods", Namespace: "demo", Verb: "watch", Message: `pods is forbidden: User "v" cannot watch resource "pods"`}
	rs := &watch.ForbiddenError{Resource: "replicasets.apps", Namespace: "demo", Verb: "list", Message: "replicasets.apps is forbidden"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("--workers must be >= 1, got 0"), "error: --workers must be >= 1, got 0"},
		{"newlines folded", errors.New("a\nb  c"), "error: a b c"},
		{"control characters escaped", errors.New("bad \x1b[31mname"), "error: bad ^[[31mname"},
		{"one forbidden resource", watch.ForbiddenErrors{pods}, "error: " + pods.Error()},
		{"wrapped: one line", fmt.Errorf("wrapped: %w", watch.ForbiddenErrors{rs, pods}),
			"error: wrapped: " + rs.Error() + " " + pods.Error()},
		{"every forbidden resource, a line each", watch.ForbiddenErrors{rs, pods},
			"error: " + rs.Error() + "\nerror: " + pods.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorLine(tt.err); got != tt.want {
				t.Errorf("ErrorLine() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
