package table

import (
	"bytes"
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

// A page is cut into round(size/frameBytes) frames of equal size; a page
// of one frame is what the codec of unframed pages writes.
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
		for i := 1; i < want; i++ {
			if got := fr.plain[i] - fr.plain[i-1]; got != fr.plain[1] {
				t.Errorf("page of %d bytes: frame %d of %d bytes, the first of %d", n, i, got, fr.plain[1])
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
