package redact

import "io"

// LogFilter masks credentials in every klog call (klog.SetLogFilter): the arguments of Info,
// Infof and InfoS alike, and the key/value pairs of contextual loggers, which klog routes
// through the same filter. Byte slices (wire data) are replaced by their length.
type LogFilter struct{}

// Filter masks the arguments of Info, Warning, Error and their ln forms.
func (LogFilter) Filter(args []any) []any { return values(args) }

// FilterF masks the arguments of a format call; the format itself comes from code.
func (LogFilter) FilterF(format string, args []any) (string, []any) {
	return format, values(args)
}

// FilterS masks the message and every value of a structured call.
func (LogFilter) FilterS(msg string, kv []any) (string, []any) {
	out := make([]any, len(kv))
	for i, v := range kv {
		if i%2 == 0 {
			out[i] = v // a key
			continue
		}
		out[i] = Value(v)
	}
	return Text(msg), out
}

func values(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = Value(a)
	}
	return out
}

// Writer masks credentials in each write (klog's text logger writes one entry per write) before
// passing it on: the last net under LogFilter, for what klog formats itself, such as the error
// of an ErrorS call.
type Writer struct{ W io.Writer }

// Write masks p and writes it whole; it reports len(p) on success.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
