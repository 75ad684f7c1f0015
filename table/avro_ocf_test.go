package table

import (
	"bytes"
	"compress/flate"
	"math/rand/v2"
	"testing"
)

// A deflate block is compressed by a writer reused from earlier blocks; its
// bytes must be those of a fresh writer, which manifests read by other
// implementations and byte-compared fixtures rely on.
func TestDeflateBlockMatchesFreshWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := [][]byte{nil, []byte("a"), bytes.Repeat([]byte("manifest-entry "), 5000)}
	for _, n := range []int{100, 70_000, 300_000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(16)) // compressible, with matches far apart
		}
		blocks = append(blocks, b)
	}
	// Twice over, so every block after the first goes through a writer
	// that compressed others before.
	for round := range 2 {
		for i, raw := range blocks {
			var want bytes.Buffer
			w, err := flate.NewWriter(&want, flate.DefaultCompression)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(raw)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := compressAvroBlock(avroCodecDeflate, raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("round %d block %d (%d bytes): %d compressed bytes differ from a fresh writer's %d", round, i, len(raw), len(got), want.Len())
			}
			back, err := decompressAvroBlock(avroCodecDeflate, got)
			if err != nil || !bytes.Equal(back, raw) {
				t.Fatalf("round %d block %d: does not decompress to its input (%v)", round, i, err)
			}
		}
	}
}

// BenchmarkEncodeManifestDeflate encodes a small manifest, as a commit
// writes one per checkpoint and table.
func BenchmarkEncodeManifestDeflate(b *testing.B) {
	entries := sampleEntries()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeManifest(entries, avroCodecDeflate, [16]byte{3}); err != nil {
			b.Fatal(err)
		}
	}
}
