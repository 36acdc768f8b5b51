package apistats

import (
	// klauspost/compress's gzip, not the standard library's: the same stream decompressed with
	// about a third less CPU (docs/performance.md: 240 MB/s against 153). A large initial list
	// arrives gzipped, and its decompression is on the goroutine that decodes the watch's events.
	"github.com/klauspost/compress/gzip"
)

// gunzipBody decompresses a gzip body lazily (the first Read), as Go's transport does. Each
// Read returns what was decompressed so far and waits for more only when it has none: a
// watch's events, each flushed by the server, are handed on as they arrive.
type gunzipBody struct {
	wire    *countingBody
	decoded *countingBody // counts only; its rc is unused
	zr      *gzip.Reader
	err     error
}

func newGunzipBody(wire, decoded *countingBody) *gunzipBody {
	return &gunzipBody{wire: wire, decoded: decoded}
}

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.wire)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	g.decoded.add(n)
	return n, err
}

func (g *gunzipBody) Close() error { return g.wire.Close() }
