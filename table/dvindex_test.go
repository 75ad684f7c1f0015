package table

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func dvCard(n int64) *int64 { return &n }

var dvindex32Ranges = []DeletionVectorRange{
	{DataFile: "a", Offset: 1, Length: 24, Cardinality: dvCard(2)},
	{DataFile: "b", Offset: 33, Length: 22, Cardinality: dvCard(1)},
}

// The Java golden vector: positions {2,3} then {1}.
func TestDVIndexGoldenVector(t *testing.T) {
	golden := readFixture(t, "dvindex-vectors", "dvindex-32")
	data, ranges := EncodeDVIndex(map[string]*roaring.Bitmap{
		"a": roaring.BitmapOf(2, 3),
		"b": roaring.BitmapOf(1),
		"c": roaring.New(), // empty: left out
	})
	if !bytes.Equal(data, golden) {
		t.Fatalf("encoded\n%x\nwant\n%x", data, golden)
	}
	if len(ranges) != 2 {
		t.Fatalf("ranges %+v", ranges)
	}
	for i, r := range ranges {
		w := dvindex32Ranges[i]
		if r.DataFile != w.DataFile || r.Offset != w.Offset || r.Length != w.Length || *r.Cardinality != *w.Cardinality {
			t.Fatalf("range %d: %+v, want %+v", i, r, w)
		}
	}
	dvs, err := DecodeDVIndex("dvindex-32", golden, dvindex32Ranges)
	if err != nil {
		t.Fatal(err)
	}
	if !dvs["a"].Equals(roaring.BitmapOf(2, 3)) || !dvs["b"].Equals(roaring.BitmapOf(1)) {
		t.Fatalf("decoded %v %v", dvs["a"], dvs["b"])
	}
}

func TestDVIndexRoundTripRunContainers(t *testing.T) {
	big := roaring.New()
	big.AddRange(10, 100000) // becomes a run container after runOptimize
	big.Add(1 << 30)
	in := map[string]*roaring.Bitmap{"data-x-0.parquet": big, "data-x-1.parquet": roaring.BitmapOf(0, 7, 70000)}
	data, ranges := EncodeDVIndex(in)
	if cookie := binary.LittleEndian.Uint16(data[ranges[0].Offset+8:]); cookie != 12347 {
		t.Fatalf("cookie %d, want the run-container cookie 12347", cookie)
	}
	out, err := DecodeDVIndex("f", data, ranges)
	if err != nil {
		t.Fatal(err)
	}
	for name, bm := range in {
		if !out[name].Equals(bm) {
			t.Fatalf("%s differs", name)
		}
	}
	if empty, r := EncodeDVIndex(nil); !bytes.Equal(empty, []byte{1}) || len(r) != 0 {
		t.Fatalf("empty index %x %v", empty, r)
	}
}

func TestDVIndexBadInput(t *testing.T) {
	golden := readFixture(t, "dvindex-vectors", "dvindex-32")
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), golden...)) }
	withRange := func(r DeletionVectorRange) []DeletionVectorRange { return []DeletionVectorRange{r} }
	for _, tc := range []struct {
		name   string
		data   []byte
		ranges []DeletionVectorRange
		want   string
	}{
		{"empty", nil, dvindex32Ranges, "empty"},
		{"version", mutate(func(b []byte) []byte { b[0] = 2; return b }), dvindex32Ranges, "version 2"},
		{"truncated", golden[:40], dvindex32Ranges, "outside the file"},
		{"size", golden, withRange(DeletionVectorRange{DataFile: "a", Offset: 1, Length: 22}), "size prefix 24"},
		{"offset", golden, withRange(DeletionVectorRange{DataFile: "a", Offset: 2, Length: 24}), "size prefix"},
		{"negative", golden, withRange(DeletionVectorRange{DataFile: "a", Offset: -5, Length: 24}), "outside the file"},
		{"huge", golden, withRange(DeletionVectorRange{DataFile: "a", Offset: 1, Length: 1 << 30}), "outside the file"},
		{"magic", mutate(func(b []byte) []byte { b[5] ^= 1; return b }), dvindex32Ranges, "magic"},
		{"crc", mutate(func(b []byte) []byte { b[20] ^= 1; return b }), dvindex32Ranges, "CRC32"},
		{"cardinality", golden, withRange(DeletionVectorRange{DataFile: "a", Offset: 1, Length: 24, Cardinality: dvCard(3)}), "cardinality 2, recorded 3"},
		{"duplicate", golden, []DeletionVectorRange{dvindex32Ranges[0], dvindex32Ranges[0]}, "two ranges"},
		{"64-bit", readFixture(t, "dvindex-vectors", "dvindex-64"), withRange(DeletionVectorRange{DataFile: "a", Offset: 1, Length: 36}), "64-bit"},
	} {
		_, err := DecodeDVIndex("index/index-x-0", tc.data, tc.ranges)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "index/index-x-0") {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeDVIndex(f *testing.F) {
	f.Add(readFixture(f, "dvindex-vectors", "dvindex-32"), int32(1), int32(24), int32(33), int32(22))
	f.Add(readFixture(f, "dvindex-vectors", "dvindex-64"), int32(1), int32(36), int32(45), int32(34))
	f.Add(readFixture(f, "pk-dv-parquet", "index/index-16bec1d6-fa31-49bd-a240-deadcfff6003-0"), int32(1), int32(22), int32(0), int32(0))
	f.Fuzz(func(t *testing.T, data []byte, off1, len1, off2, len2 int32) {
		ranges := []DeletionVectorRange{{DataFile: "a", Offset: off1, Length: len1}, {DataFile: "b", Offset: off2, Length: len2}}
		dvs, err := DecodeDVIndex("dv-fuzz", data, ranges)
		if err != nil {
			if !strings.Contains(err.Error(), "dv-fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What decodes re-encodes to vectors with the same content.
		enc, r := EncodeDVIndex(dvs)
		back, err := DecodeDVIndex("again", enc, r)
		if err != nil {
			t.Fatal(err)
		}
		for name, bm := range dvs {
			if !bm.IsEmpty() && !back[name].Equals(bm) {
				t.Fatalf("%s changed in a round trip", name)
			}
		}
	})
}

// FuzzDecodeDVIndexBitmap frames arbitrary bitmap bytes with a valid size,
// magic and CRC so the roaring decoder itself sees corrupt input.
func FuzzDecodeDVIndexBitmap(f *testing.F) {
	golden := readFixture(f, "dvindex-vectors", "dvindex-32")
	f.Add(golden[9:29])
	f.Add(golden[41:59])
	big := roaring.New()
	big.AddRange(10, 100000)
	big.RunOptimize()
	b, _ := big.ToBytes()
	f.Add(b)
	f.Fuzz(func(t *testing.T, bitmap []byte) {
		payload := append(binary.BigEndian.AppendUint32(nil, dvMagic32), bitmap...)
		data := binary.BigEndian.AppendUint32([]byte{dvIndexVersion}, uint32(len(payload)))
		data = append(data, payload...)
		data = binary.BigEndian.AppendUint32(data, crc32.ChecksumIEEE(payload))
		r := []DeletionVectorRange{{DataFile: "a", Offset: 1, Length: int32(len(payload))}}
		dvs, err := DecodeDVIndex("dv-fuzz", data, r)
		if err != nil {
			if !strings.Contains(err.Error(), "dv-fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// A bitmap that decodes is usable.
		bm := dvs["a"]
		n := uint64(0)
		for it := bm.Iterator(); it.HasNext(); it.Next() {
			n++
		}
		if n != bm.GetCardinality() {
			t.Fatalf("iterated %d of cardinality %d", n, bm.GetCardinality())
		}
	})
}
