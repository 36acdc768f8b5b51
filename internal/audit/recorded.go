package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/input"
	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Recorded joins a recording's object lines to an audit log read once, in order (replay
// --audit-log): before a line is matched, the log is read up to the line's time plus the
// window, so each line finds the write that made it as the live join would, and the log is
// never held whole (the Joiner's bounds hold). Not safe for concurrent use.
type Recorded struct {
	j      *Joiner
	f      *os.File
	br     *bufio.Reader
	r      LineReader
	ahead  []*Event // read past the line being matched, for later lines
	eof    bool
	window time.Duration
}

// OpenRecorded opens an audit log file for a replay. It must be a regular file: a replay reads
// it to its end (a FIFO or a device would never end), and it is checked before it is opened
// (opening a FIFO waits for a writer).
func OpenRecorded(path string, notice func(string)) (*Recorded, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--audit-log %s is not a regular file (%s): a replay reads an audit log to its end", path, input.FileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	rec := &Recorded{j: NewJoiner(0, DefaultWindow), f: f, br: bufio.NewReaderSize(f, MaxLine), window: DefaultWindow}
	rec.r = LineReader{Source: "--audit-log " + path, Notice: notice, WritesOnly: true,
		Event: func(e *Event) { rec.ahead = append(rec.ahead, e) }}
	return rec, nil
}

// OpenLog is OpenRecorded for a command's --audit-log: nil without a path, the lines it skips
// said as warnings on errOut.
func OpenLog(path string, errOut io.Writer) (*Recorded, error) {
	if path == "" {
		return nil, nil
	}
	return OpenRecorded(path, func(m string) { fmt.Fprintln(errOut, "warning: "+printer.Escape(redact.Text(m))) })
}

// Close closes the file; a nil Recorded has none.
func (rec *Recorded) Close() error {
	if rec == nil {
		return nil
	}
	return rec.f.Close()
}

// Join sets ev.Audit to the audit event of the write that made it, when the log has it; a line
// that carries one already (recorded with --audit-log) keeps it.
func (rec *Recorded) Join(ev *watch.Event) {
	if rec == nil || ev.Obj.Audit != nil || !ev.Type.IsObject() || !Joins(ev) {
		return
	}
	until := ev.Time.Add(rec.window)
	for {
		for len(rec.ahead) > 0 && !at(rec.ahead[0]).After(until) {
			rec.j.Add(rec.ahead[0])
			rec.ahead[0] = nil
			rec.ahead = rec.ahead[1:]
		}
		if len(rec.ahead) > 0 || rec.eof {
			break
		}
		rec.readLine()
	}
	ev.Obj.Audit = rec.j.match(ev)
}

// at is when an event's request was done, by the audit log's clock.
func at(e *Event) time.Time {
	if e.StageTime.IsZero() {
		return e.RequestReceived
	}
	return e.StageTime
}

// readLine reads the next line, or a piece of MaxLine bytes of a longer one, into the
// LineReader.
func (rec *Recorded) readLine() {
	b, err := rec.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		rec.r.Line(b, time.Time{}) // a piece of a line over MaxLine: skipped
		return
	case errors.Is(err, io.EOF), err == nil:
	default:
		rec.r.skip("reading stopped: " + errText(err))
		rec.eof = true
		return
	}
	if errors.Is(err, io.EOF) {
		rec.eof = true
	}
	if b = bytes.TrimSuffix(b, []byte("\n")); len(b) > 0 || err == nil {
		rec.r.Line(b, time.Time{})
	}
}
