package cmd

import (
	"strings"
	"testing"
	"time"
)

// --audit-wait is bounded: a line waits at most a minute for its audit event.
func TestAuditWaitValidate(t *testing.T) {
	for _, w := range []time.Duration{-time.Second, 2 * time.Minute} {
		if err := (&AuditOptions{Wait: w}).Validate(); err == nil || !strings.Contains(err.Error(), "--audit-wait must be between 0s and 1m") {
			t.Errorf("--audit-wait %s: %v", w, err)
		}
	}
}
