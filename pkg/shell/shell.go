// Package shell quotes words for the commands the plugin suggests (in the report, in error
// lines), so that a pasted suggestion runs what it says: an object name may hold `;`, `$(...)`,
// backticks and spaces (ClusterRole and Role names do), and a file name anything.
package shell

import "strings"

// Quote returns s as one POSIX shell word: as it is when it holds only characters no shell
// treats specially, else in single quotes, a quote inside closed, escaped and reopened.
func Quote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r)
		return !plain
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
