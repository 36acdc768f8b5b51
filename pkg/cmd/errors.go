package cmd

import (
	"errors"
	"net/url"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// ErrorLine turns an error into the one line kubectl would print for it.
func ErrorLine(err error) string {
	msg := err.Error()
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// kubectl's words for a server it cannot reach.
		msg = "Unable to connect to the server: " + uerr.Err.Error()
	}
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ")), " ")
	return "error: " + printer.Escape(msg)
}
