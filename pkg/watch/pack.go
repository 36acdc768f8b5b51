package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/huff0"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// Packed cached bytes (issue #37). The cache keeps every object's bytes for as long as the
// object lives (--diff reads an update's old object from them), and on a watch of ConfigMaps
// or Secrets most of those bytes are the user's data. Each kind's bytes are entropy-coded with
// one Huffman table of its own (huff0), built from the first packTrainBytes bytes the kind's
// objects brought and never changed after: an object is coded without a table of its own (a
// per-object table is ~10% of a 1 KiB object and costs building at every decode), coding is a
// table lookup per byte, and any number of decoders share the table. An object whose coding
// would not save an eighth of its bytes is kept as received, as is every object before its
// kind's table is built.

// packTrainBytes is how many bytes of a kind's first objects its table is built from.
const packTrainBytes = 64 << 10

// packBlock is the largest block coded at once (huff0 codes at most 128 KiB); a larger object
// is coded block by block.
const packBlock = 64 << 10

// A kind is packed when its table codes its first bytes into at most packKindNum/packKindDen of
// them. Text codes to less (YAML, JSON and scripts: 61-69% measured; the bench's ConfigMaps of
// random letters 68%); objects of structured protobuf (a pod 74%), base64 (75-76%) or compressed
// data code to more, and packing them costs more than it saves: every line that reads such an
// object decodes its bytes again (10,000 pods packed: 11% less peak RSS for ~40% more CPU to
// sync, docs/performance.md). A kind over the bound is never tried again.
const (
	packKindNum = 7
	packKindDen = 10
)

// packMin is the smallest object coded: below it a header and the coding's bits save little.
const packMin = 256

// packTable is one kind's coding: the histogram of its first bytes until the table is built.
type packTable struct {
	kind  string // for -v=4's line
	mu    sync.Mutex
	hist  [256]uint64
	seen  int
	coder atomic.Pointer[packCoder]
	// none: the first bytes gave no table worth coding with; never tried again.
	none atomic.Bool
}

// packCoder codes and decodes with one table.
type packCoder struct {
	dec *huff0.Decoder
	// counts is the histogram the table was built from, scaled to packTrainLen bytes: every
	// new encoder builds its table from it.
	counts [256]uint16
	table  []byte // the table as huff0 writes it
	encs   sync.Pool
}

// packKey names a table: a kind's bytes in one encoding (JSON and protobuf bytes differ).
type packKey struct {
	gvk   schema.GroupVersionKind
	codec compactCodec
}

func (k packKey) String() string {
	if k.codec == compactJSON {
		return k.gvk.GroupKind().String() + " (JSON)"
	}
	return k.gvk.GroupKind().String()
}

// packTables holds each kind's table for the process's life (a handful of kinds).
var packTables sync.Map // packKey → *packTable

func packTableFor(key packKey) *packTable {
	if t, ok := packTables.Load(key); ok {
		return t.(*packTable)
	}
	t, _ := packTables.LoadOrStore(key, &packTable{kind: key.String()})
	return t.(*packTable)
}

// pack returns raw coded with its kind's table and true, or raw itself and false (no table yet,
// too small, or not worth it). The coded bytes are a new allocation; raw is not changed.
func pack(key packKey, raw []byte) ([]byte, bool) {
	if len(raw) < packMin {
		return raw, false
	}
	t := packTableFor(key)
	c := t.coder.Load()
	if c == nil {
		if !t.none.Load() {
			t.learn(raw)
		}
		return raw, false
	}
	return c.pack(raw)
}

// learn counts raw's bytes into the histogram and builds the table once enough were seen.
func (t *packTable) learn(raw []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.coder.Load() != nil || t.none.Load() {
		return
	}
	for _, b := range raw {
		t.hist[b]++
	}
	if t.seen += len(raw); t.seen < packTrainBytes {
		return
	}
	c, coded := newPackCoder(&t.hist, t.seen)
	if c != nil && coded*packKindDen <= 100*packKindNum {
		t.coder.Store(c)
		klog.V(4).Infof("Cached %s objects packed: a table built from their first %d bytes codes them to %d%%", t.kind, t.seen, coded)
		return
	}
	t.none.Store(true)
	klog.V(4).Infof("Cached %s objects kept as received: their first %d bytes code to %d%%, more than 70%%", t.kind, t.seen, coded)
}

// newPackCoder builds a table from a histogram: every byte value gets a code (at least one
// count), so any later object can be coded with it.
// It also returns the percentage of its bytes the histogram's input codes to (nil and 100
// when it does not code).
func newPackCoder(hist *[256]uint64, seen int) (*packCoder, int) {
	c := &packCoder{}
	for b, n := range hist {
		c.counts[b] = uint16(max(1, n*packTrainLen/uint64(seen)))
	}
	s := c.newEncoder()
	if s == nil {
		return nil, 100
	}
	c.table = append([]byte(nil), s.OutTable...)
	ds, _, err := huff0.ReadTable(c.table, nil)
	if err != nil {
		return nil, 100
	}
	c.dec = ds.Decoder()
	coded := (100*len(s.OutData) + packTrainLen - 1) / packTrainLen // rounded up
	c.encs.Put(s)
	return c, coded
}

// packTrainLen is the length of the input a table is built from (the histogram scaled to it).
const packTrainLen = 32 << 10

// newEncoder returns a huff0 scratch that codes with c's table: it codes the histogram's
// input once (huff0 builds the same table from the same counts), then reuses that table.
func (c *packCoder) newEncoder() *huff0.Scratch {
	train := make([]byte, 0, packTrainLen+256)
	for b, n := range c.counts {
		for range n {
			train = append(train, byte(b))
		}
	}
	s := &huff0.Scratch{}
	if _, _, err := huff0.Compress1X(train, s); err != nil {
		return nil
	}
	if c.table != nil && string(s.OutTable) != string(c.table) {
		return nil
	}
	s.Reuse = huff0.ReusePolicyMust
	return s
}

// encoder returns a pooled scratch that codes with c's table, nil if none could be made.
func (c *packCoder) encoder() *huff0.Scratch {
	if s, ok := c.encs.Get().(*huff0.Scratch); ok {
		return s
	}
	return c.newEncoder()
}

// The coded form: uvarint(n<<1 | blocks), n the decoded length. An object of one block
// (blocks 0, most objects) is then that block coded. A larger one is a series of blocks of
// up to packBlock bytes, each uvarint(m<<1 | kept) and m bytes: kept blocks are as they were,
// the others coded. A block is coded in one stream below pack4X bytes and in huff0's four from
// it: four decode ~2.5 times as fast, for ~10 bytes more, enough to put a bench ConfigMap (~890
// bytes in one stream) in the 1,024-byte size class instead of 896.
func (c *packCoder) pack(raw []byte) ([]byte, bool) {
	s := c.encoder()
	if s == nil {
		return raw, false
	}
	defer c.encs.Put(s)
	limit := len(raw) - len(raw)/8 // an eighth saved at least
	if len(raw) <= packBlock {
		coded, _, err := compressBlock(raw, s)
		if err != nil {
			return raw, false
		}
		var hdr [binary.MaxVarintLen64]byte
		h := binary.AppendUvarint(hdr[:0], uint64(len(raw))<<1)
		if len(h)+len(coded) > limit {
			return raw, false
		}
		// One allocation of the coded size.
		return append(append(make([]byte, 0, len(h)+len(coded)), h...), coded...), true
	}
	out := make([]byte, 0, limit)
	out = binary.AppendUvarint(out, uint64(len(raw))<<1|1)
	for rest := raw; len(rest) > 0; {
		blk := rest[:min(len(rest), packBlock)]
		rest = rest[len(blk):]
		if coded, _, err := compressBlock(blk, s); err == nil {
			out = binary.AppendUvarint(out, uint64(len(coded))<<1)
			out = append(out, coded...)
		} else {
			out = binary.AppendUvarint(out, uint64(len(blk))<<1|1)
			out = append(out, blk...)
		}
		if len(out) > limit {
			return raw, false
		}
	}
	return append(make([]byte, 0, len(out)), out...), true
}

// pack4X is the smallest block coded in four streams.
const pack4X = 4 << 10

func compressBlock(blk []byte, s *huff0.Scratch) ([]byte, bool, error) {
	if len(blk) >= pack4X {
		return huff0.Compress4X(blk, s)
	}
	return huff0.Compress1X(blk, s)
}

var errPacked = errors.New("corrupt packed object bytes")

// unpack decodes packed bytes of table key into buf (grown as needed) and returns them.
func unpack(key packKey, packed, buf []byte) ([]byte, error) {
	t, ok := packTables.Load(key)
	if !ok {
		return nil, errPacked
	}
	c := t.(*packTable).coder.Load()
	if c == nil {
		return nil, errPacked
	}
	return c.unpackTo(buf, packed)
}

// unpackTo decodes packed bytes into buf (grown as needed) and returns them.
func (c *packCoder) unpackTo(buf, packed []byte) ([]byte, error) {
	h, k := binary.Uvarint(packed)
	n := h >> 1
	if k <= 0 || n > uint64(len(packed))*8+packBlock {
		return nil, errPacked
	}
	packed = packed[k:]
	if cap(buf) < int(n) {
		buf = make([]byte, 0, n)
	}
	out := buf[:0]
	if h&1 == 0 {
		if n > packBlock {
			return nil, errPacked
		}
		return c.decodeBlock(out, packed, int(n))
	}
	for len(packed) > 0 {
		h, k := binary.Uvarint(packed)
		if k <= 0 || h>>1 > uint64(len(packed)-k) {
			return nil, errPacked
		}
		blk := packed[k : k+int(h>>1)]
		packed = packed[k+int(h>>1):]
		if h&1 == 1 {
			if len(out)+len(blk) > int(n) {
				return nil, errPacked
			}
			out = append(out, blk...)
			continue
		}
		want := min(int(n)-len(out), packBlock)
		if want <= 0 {
			return nil, errPacked
		}
		var err error
		if out, err = c.decodeBlock(out, blk, want); err != nil {
			return nil, err
		}
	}
	if len(out) != int(n) {
		return nil, errPacked
	}
	return out, nil
}

// decodeBlock appends the want bytes coded in blk to out (whose capacity has room for them).
func (c *packCoder) decodeBlock(out, blk []byte, want int) ([]byte, error) {
	var dec []byte
	var err error
	if want >= pack4X {
		dec, err = c.dec.Decompress4X(out[len(out):len(out)+want:len(out)+want], blk)
	} else {
		dec, err = c.dec.Decompress1X(out[len(out):len(out):len(out)+want], blk)
	}
	if err != nil || len(dec) != want {
		return nil, errPacked
	}
	return out[:len(out)+want], nil
}

// unpackBufs are the buffers objects are decoded from (a decoded Go object copies what it
// keeps of its bytes).
var unpackBufs = sync.Pool{New: func() any { return new([]byte) }}

// packKey is the key of the table c's bytes are coded with.
func (c *compactObject) packKey() packKey { return packKey{gvk: c.gvk, codec: c.codec} }

// pack packs the object's bytes with its kind's table, if it has one and they are worth it.
// Only the goroutine that made c may call it, before c is handed on.
func (c *compactObject) pack() {
	if !c.packed {
		c.raw, c.packed = pack(c.packKey(), c.raw)
	}
}

// packReceived packs a watch event's object that was left to pack (packLater) and clears the
// mark. Only the goroutine that holds c alone may call it: the tap before it hands c on, or the
// list's preparer for an object of a streaming list, which nothing else reads until the list's
// lines (takePrepared).
func (c *compactObject) packReceived() {
	if c.packLater {
		c.packLater = false
		c.pack()
	}
}

// packOrOwn packs the object's bytes, or copies them when they are not packed: for an object
// made on a buffer it does not own (a list body, a decoder's buffer), which a packed object
// then no longer holds.
func (c *compactObject) packOrOwn() {
	if c.pack(); !c.packed {
		c.raw = bytes.Clone(c.raw)
	}
}

// bytes returns the object's bytes, decoded into a pooled buffer when they are packed; done
// gives the buffer back (nothing may keep the bytes after it).
func (c *compactObject) bytes() (raw []byte, done func(), err error) {
	if !c.packed {
		return c.raw, func() {}, nil
	}
	bp := unpackBufs.Get().(*[]byte)
	raw, err = unpack(c.packKey(), c.raw, *bp)
	if err != nil {
		unpackBufs.Put(bp)
		return nil, nil, err
	}
	*bp = raw[:0]
	return raw, func() { unpackBufs.Put(bp) }, nil
}
