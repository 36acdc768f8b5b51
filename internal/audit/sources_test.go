//go:build unix

package audit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --audit-log must be a regular file, or not there yet (waited for, as tail -F does): a FIFO
// would block the run before --timeout or a signal could end it, /dev/zero is one endless line.
func TestAuditLogNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(good, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, wantErr string }{
		{fifo, "--audit-log " + fifo + " is not a regular file (a FIFO): give the file the API server writes its audit log to (--audit-log-path)"},
		{"/dev/zero", "--audit-log /dev/zero is not a regular file (a device)"},
		{dir, "is not a regular file (a directory)"},
		{filepath.Join(dir, "later.log"), ""},
		{good, ""},
		{"", ""},
	}
	for _, tt := range tests {
		err := Sources{File: tt.path}.check()
		if (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr))) {
			t.Errorf("%q: %v, want %q", tt.path, err, tt.wantErr)
		}
	}
}
