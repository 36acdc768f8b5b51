package cmd

import (
	"errors"
	"net/url"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// ErrorLine turns an error into the one line kubectl would print for it; an error made of
// several (every forbidden resource of a run) gets one line each, as kubectl get prints them.
func ErrorLine(err error) string {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := multi.Unwrap(); len(errs) > 0 {
			lines := make([]string, len(errs))
			for i, e := range errs {
				lines[i] = ErrorLine(e)
			}
			return strings.Join(lines, "\n")
		}
	}
	msg := err.Error()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// kubectl's words for a server it cannot reach.
		msg = "Unable to connect to the server: " + uerr.Err.Error()
	}
	var herr *hintError
	if errors.As(err, &herr) && !strings.HasSuffix(msg, herr.hint+")") {
		msg += " (" + herr.hint + ")"
	}
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
	return "error: " + printer.Escape(msg)
}
