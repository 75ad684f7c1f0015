package table

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdTestPages are page bodies as writers leave them: one frame of the
// fastest level, a frame with a checksum and without a content size, and
// 1 KiB frames of the framed codec.
func zstdTestPages(t testing.TB) (plains, bodies [][]byte) {
	fast, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 100, 8 << 10, 300 << 10} {
		plain := make([]byte, n)
		for i := range plain {
			plain[i] = byte(i*7%13) + byte(i/500) + byte(i*i>>9)
		}
		framed, err := newFramedZstdCodec(1024).Encode(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		stream.Reset(&buf)
		if _, err := stream.Write(plain); err != nil {
			t.Fatal(err)
		}
		if err := stream.Close(); err != nil {
			t.Fatal(err)
		}
		for _, body := range [][]byte{fast.EncodeAll(plain, nil), buf.Bytes(), framed} {
			plains, bodies = append(plains, plain), append(bodies, body)
		}
	}
	return plains, bodies
}

// Both decoders give the page's bytes, and fail on a buffer of any other
// size than the page's.
func TestZstdDecodeInto(t *testing.T) {
	plains, bodies := zstdTestPages(t)
	for i, body := range bodies {
		plain := plains[i]
		for name, decode := range map[string]func(dst, src []byte) error{"zstdDecodeInto": zstdDecodeInto, "go": zstdDecodeIntoGo} {
			dst := make([]byte, len(plain)+1)
			if err := decode(dst[:len(plain)], body); err != nil {
				t.Fatalf("%s, page %d: %v", name, i, err)
			}
			if !bytes.Equal(dst[:len(plain)], plain) {
				t.Fatalf("%s, page %d: bytes differ", name, i)
			}
			if err := decode(dst, body); err == nil {
				t.Fatalf("%s, page %d: decompressed into a buffer a byte too long", name, i)
			}
			if err := decode(make([]byte, len(plain)-1), body); err == nil {
				t.Fatalf("%s, page %d: decompressed into a buffer a byte too short", name, i)
			}
		}
	}
}

// Corrupt page bodies yield errors, never panics or writes beyond the
// buffer; where both decoders accept a body, they give the same bytes.
func FuzzZstdDecodeInto(f *testing.F) {
	plains, bodies := zstdTestPages(f)
	for i, body := range bodies {
		if len(plains[i]) <= 16<<10 {
			f.Add(body, uint16(len(plains[i])))
		}
	}
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x01, 0x00}, uint16(5))
	f.Fuzz(func(t *testing.T, body []byte, size uint16) {
		const guard = 8
		got := make([]byte, int(size)+guard)
		errC := zstdDecodeInto(got[:size], body)
		want := make([]byte, int(size)+guard)
		errGo := zstdDecodeIntoGo(want[:size], body)
		if !bytes.Equal(got[size:], make([]byte, guard)) || !bytes.Equal(want[size:], make([]byte, guard)) {
			t.Fatal("a decoder wrote beyond its buffer")
		}
		if errC == nil && errGo == nil && !bytes.Equal(got, want) {
			t.Fatal("the decoders disagree")
		}
	})
}
