package table

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func framedPage(t testing.TB, n, frameBytes int) (src, body []byte) {
	src = make([]byte, n)
	for i := range src {
		src[i] = byte(i*7%13) + byte(i/500)
	}
	body, err := newFramedZstdCodec(frameBytes).Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return src, body
}

// The writer's frames say where they lie, and the frames a byte range
// needs decompress to exactly those bytes of the page.
func TestZstdFramesLocateBytes(t *testing.T) {
	src, body := framedPage(t, 10_000, 1000)
	fr, err := parseZstdFrames(body, len(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(fr.comp) - 1; got != 10 {
		t.Fatalf("%d frames, want 10", got)
	}
	for _, r := range [][2]int64{{0, 1}, {999, 1000}, {999, 1001}, {1000, 1008}, {4321, 7777}, {9992, 10_000}, {0, 10_000}} {
		a, b := fr.span(r[0], r[1])
		sc := new(pageScratch)
		lay := &pageLayout{frames: &fr}
		d := &DataFile{f: memFile{bytes.NewReader(body)}}
		got, err := d.layoutBytes(lay, pageSpan{}, r[0], r[1], sc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src[r[0]:r[1]]) {
			t.Fatalf("bytes %v differ", r)
		}
		if want := (r[1]-1)/1000 - r[0]/1000 + 1; int64(b-a) != want {
			t.Fatalf("bytes %v: frames [%d,%d), want %d frames", r, a, b, want)
		}
	}
	// A single frame of a page without a content size (as other writers
	// leave it) holds the whole page.
	one, err := parseZstdFrames(body[:fr.comp[1]], 1000)
	if err != nil || len(one.comp) != 2 {
		t.Fatalf("one frame: %+v %v", one, err)
	}
}

// Bad frame headers yield errors, never panics or frames beyond the body.
func FuzzZstdFrames(f *testing.F) {
	for _, n := range []int{0, 1, 300, 5000} {
		_, body := framedPage(f, n, 1024)
		f.Add(body, n)
	}
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x29, 0, 0, 1, 2, 3, 4, 5}, 5)
	f.Fuzz(func(t *testing.T, body []byte, plainSize int) {
		if plainSize < 0 || plainSize > 1<<20 {
			return
		}
		fr, err := parseZstdFrames(body, plainSize)
		if err != nil {
			if !strings.Contains(err.Error(), "zstd frames") {
				t.Fatalf("error does not say what: %v", err)
			}
			return
		}
		if n := len(fr.comp); n < 2 || n != len(fr.plain) || int(fr.comp[n-1]) != len(body) || int(fr.plain[n-1]) != plainSize {
			t.Fatalf("frames %+v of a %d-byte body of %d bytes", fr, len(body), plainSize)
		}
		d := &DataFile{f: memFile{bytes.NewReader(body)}}
		sc := new(pageScratch)
		if plainSize > 0 {
			_, _ = d.layoutBytes(&pageLayout{frames: &fr}, pageSpan{}, int64(plainSize/2), int64(plainSize), sc)
		}
		_, _, _ = zstdBody(body, plainSize, sc)
	})
}

// A page is cut into round(size/frameBytes) frames, counted from its end:
// every frame but the first holds frameBytes; a page of one frame is what
// the codec of unframed pages writes.
func TestPagesCutIntoFrames(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 4096: 1, 6143: 1, 6144: 2, 12 << 10: 3, 20_500: 5} {
		src, body := framedPage(t, n, 4096)
		fr, err := parseZstdFrames(body, len(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.comp)-1 != want {
			t.Errorf("page of %d bytes: %d frames, want %d", n, len(fr.comp)-1, want)
		}
		for i := 2; i <= want; i++ {
			if got := fr.plain[i] - fr.plain[i-1]; got != 4096 {
				t.Errorf("page of %d bytes: frame %d of %d bytes, want 4096", n, i-1, got)
			}
		}
		if want == 1 {
			whole, err := unframedZstdCodec().Encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, whole) {
				t.Errorf("page of %d bytes: one frame differs from an unframed page", n)
			}
		}
	}
}

// Frames of a fixed-width value column's pages hold DefaultZstdFrameRows
// values each (a primary key's twice that) and start on a value, whatever
// the definition levels before them;
// byte-array pages are cut by bytes; pages of less than 1.5
// DefaultZstdFrameBytes (the INT key group's 4 KiB) stay one frame.
func TestFixedWidthFramesHoldFrameRows(t *testing.T) {
	s := benchSchema(true)
	rows := benchRows(sortedBenchKeys(0, 3000, 1), 0)
	rows[5].Label = ""
	rec := benchRecord(s, rows)
	defer rec.Release()
	fio := newMemFS()
	if _, err := WriteDataFile(fio, "f.parquet", s, rec, seqRange(0, len(rows)), nil, DataFileOptions{Compression: "zstd"}); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDataFile(fio, "f.parquet", s)
	if err != nil {
		t.Fatal(err)
	}
	g := &d.groups[0]
	for i, f := range s.Fields {
		c := d.fieldCols[i]
		lay := d.pageLayout(g, c, 0, new(pageScratch))
		if lay == noLayout || lay.frames == nil {
			t.Fatalf("%s: first page has no framed layout", f.Name)
		}
		fr := lay.frames
		w := d.leaves[c].fixedWidth()
		frameBytes := uint32(DefaultZstdFrameBytes)
		if w > 0 && w*1024 < DefaultZstdFrameBytes*3/2 {
			if len(fr.plain) != 2 {
				t.Errorf("%s: a page of %d bytes in %d frames", f.Name, w*1024, len(fr.plain)-1)
			}
			continue
		}
		if w > 0 {
			frameBytes = uint32(w * DefaultZstdFrameRows)
			if slices.Contains(s.PrimaryKeys, f.Name) {
				frameBytes *= 2
			}
			if got := int64(fr.plain[1]) - lay.values; got != int64(frameBytes) {
				t.Errorf("%s: first frame holds %d bytes of values, want %d", f.Name, got, frameBytes)
			}
		}
		n := len(fr.plain) - 1
		if want := int(fr.plain[n]-uint32(lay.values)+frameBytes/2) / int(frameBytes); w > 0 && n != want {
			t.Errorf("%s: %d frames, want %d", f.Name, n, want)
		}
		for k := 2; k <= n; k++ {
			if got := fr.plain[k] - fr.plain[k-1]; got != frameBytes {
				t.Errorf("%s: frame %d of %d bytes, want %d", f.Name, k-1, got, frameBytes)
			}
		}
	}
}

// Learning the layout of a page of fixed-width values decompresses only
// the frames that hold its definition levels (none of a required column):
// rows of sound frames read while a damaged frame fails only the reads of
// its own rows, with an error naming the file.
func TestFixedWidthLayoutDecompressesOnlyWantedFrames(t *testing.T) {
	s := benchSchema(true)
	rows := benchRows(sortedBenchKeys(0, 3000, 1), 0)
	rec := benchRecord(s, rows)
	defer rec.Release()
	fio := newMemFS()
	if _, err := WriteDataFile(fio, "f.parquet", s, rec, seqRange(0, len(rows)), nil, DataFileOptions{Compression: "zstd"}); err != nil {
		t.Fatal(err)
	}
	good, _ := fio.ReadFile("f.parquet")
	d, err := openMem(good, "f.parquet", s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"key": rows[5].Key, "count": rows[5].Count} // required, nullable
	for _, name := range []string{"key", "count"} {
		c := d.fieldCols[s.FieldIndex(name)]
		pg := d.groups[0].pages[c][0]
		lay := d.pageLayout(&d.groups[0], c, 0, new(pageScratch))
		if lay == noLayout || len(lay.frames.comp) < 5 {
			t.Fatalf("%s: no framed layout", name)
		}
		// the last byte of a frame ends its sequences' bit stream: never 0
		data := bytes.Clone(good)
		data[pg.off+int64(lay.frames.comp[4])-1] = 0
		bad, err := openMem(data, "f.parquet", s)
		if err != nil {
			t.Fatal(err)
		}
		v := newColVec(s.Fields[s.FieldIndex(name)].Type)
		if err := bad.readRows(c, []int64{5}, v); err != nil {
			t.Fatalf("%s: row of a sound frame: %v", name, err)
		}
		if got := int64s(v)[0]; got != want[name] {
			t.Fatalf("%s: row 5 reads %d, want %d", name, got, want[name])
		}
		frameRows := int64(DefaultZstdFrameRows)
		if slices.Contains(s.PrimaryKeys, name) {
			frameRows *= 2 // framedZstdSchema
		}
		err = bad.readRows(c, []int64{3*frameRows + 5}, newColVec(v.t))
		if err == nil || !strings.Contains(err.Error(), "f.parquet") {
			t.Fatalf("%s: row of the damaged frame: %v, want an error naming the file", name, err)
		}
	}
}
