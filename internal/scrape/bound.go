package scrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds on what one scrape parses, whatever the page holds: a hostile or broken metrics
// endpoint (a million series, a label of 60 MB) costs at most these, and a scrape past one is an
// Error line saying which.
const (
	// MaxLineBytes bounds one line of the text format.
	MaxLineBytes = 64 << 10
	// MaxSeries bounds the workqueue and controller-runtime series kept from one page (a
	// controller manager with a hundred controllers exports about 3,000).
	MaxSeries = 20000
	// MaxParsedBytes bounds the text of those series handed to the exposition parser.
	MaxParsedBytes = 8 << 20
)

// The bounds in force (tests lower them).
var maxLine, maxSeries, maxParsed = MaxLineBytes, MaxSeries, MaxParsedBytes

// read reports whether the family of a metric is one Parse reads.
func read(name string) bool {
	return strings.HasPrefix(name, "workqueue_") || strings.HasPrefix(name, "controller_runtime_")
}

// sift reads a text exposition line by line and keeps only the lines of the families Parse
// reads (their HELP, TYPE and samples), so that the parser never holds the rest of a page. It
// counts the page's families (runs of lines of one metric name, as the format groups them).
func sift(r io.Reader) (kept []byte, families int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out bytes.Buffer
	series, lineNo := 0, 0
	last := ""
	for {
		line, err := readBoundedLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("line %d: %w", lineNo+1, err)
		}
		if len(line) > 0 {
			lineNo++
			name, sample := metricName(line)
			if name != "" && name != last {
				families++
				last = name
			}
			if sample && !read(baseName(name)) {
				// Not handed to the parser, but checked: a page that is not the text format
				// (HTML, prose, binary) must fail as it did, not pass as a page of no queues.
				if why := checkSample(line, name); why != "" {
					return nil, 0, fmt.Errorf("text format parsing error in line %d: %s", lineNo, why)
				}
			}
			if name != "" && read(baseName(name)) {
				if sample {
					if series++; series > maxSeries {
						return nil, 0, fmt.Errorf("more than %d workqueue and controller-runtime series on one page (the bound per scrape)", MaxSeries)
					}
				}
				if out.Len()+len(line)+1 > maxParsed {
					return nil, 0, fmt.Errorf("more than %d MiB of workqueue and controller-runtime series on one page (the bound per scrape)", MaxParsedBytes>>20)
				}
				out.Write(line)
				out.WriteByte('\n')
			}
		}
		if errors.Is(err, io.EOF) {
			return out.Bytes(), families, nil
		}
	}
}

// readBoundedLine returns the next line without its newline, or an error past maxLine.
func readBoundedLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLine+1 {
			return nil, fmt.Errorf("longer than %d KiB (the bound on one line of a metrics page)", MaxLineBytes>>10)
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// metricName returns the metric a line is about (a sample's name, or the name a HELP or TYPE
// comment describes), and whether it is a sample. Other comments and blank lines give "".
func metricName(line []byte) (string, bool) {
	s := strings.TrimLeft(string(line), " \t")
	if rest, ok := strings.CutPrefix(s, "#"); ok {
		f := strings.Fields(rest)
		if len(f) >= 2 && (f[0] == "HELP" || f[0] == "TYPE") {
			return f[1], false
		}
		return "", false
	}
	end := strings.IndexAny(s, "{ \t")
	if end < 0 {
		end = len(s)
	}
	return s[:end], s != ""
}

// baseName strips the suffixes of a histogram's or summary's series.
func baseName(name string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if b, ok := strings.CutSuffix(name, suffix); ok {
			return b
		}
	}
	return name
}

// checkSample is a light check of a sample line the parser does not see: a metric name, a
// closed label set, a value. It returns what is wrong, or "".
func checkSample(line []byte, name string) string {
	s := strings.TrimLeft(string(line), " \t")
	if strings.HasPrefix(s, `{"`) {
		return "" // a quoted UTF-8 name: left to the servers that send them
	}
	if name == "" {
		return "invalid metric name"
	}
	for i, r := range name {
		valid := r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !valid {
			return fmt.Sprintf("invalid metric name %q", name)
		}
	}
	rest := s[len(name):]
	if strings.HasPrefix(rest, "{") {
		end, quoted, escaped := -1, false, false
		for i := 1; i < len(rest) && end < 0; i++ {
			switch c := rest[i]; {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = quoted
			case c == '"':
				quoted = !quoted
			case c == '}' && !quoted:
				end = i
			}
		}
		if end < 0 {
			return "unterminated label set"
		}
		rest = rest[end+1:]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "expected float as value"
	}
	if _, err := strconv.ParseFloat(f[0], 64); err != nil {
		return fmt.Sprintf("expected float as value, got %q", f[0])
	}
	return ""
}
