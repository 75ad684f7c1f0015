package table

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// Every Java-written snapshot of the fixtures re-encodes to its exact bytes,
// which pins the key order, the optional keys and Jackson's layout.
func TestSnapshotJavaFilesReencodeExactly(t *testing.T) {
	for _, tc := range []struct {
		table string
		ids   int
	}{{"pk-dv-parquet", 6}, {"pk-mor-parquet", 5}, {"append-parquet", 4}} {
		for id := 1; id <= tc.ids; id++ {
			rel := fmt.Sprintf("snapshot/snapshot-%d", id)
			data := readFixture(t, tc.table, rel)
			s, err := DecodeSnapshot(rel, data)
			if err != nil {
				t.Fatal(err)
			}
			if s.ID != int64(id) {
				t.Fatalf("%s/%s: id %d", tc.table, rel, s.ID)
			}
			if got := EncodeSnapshot(s); !bytes.Equal(got, data) {
				t.Errorf("%s/%s re-encoded differently:\n%s\nwant:\n%s", tc.table, rel, got, data)
			}
		}
	}
}

func TestSnapshotFixtureValues(t *testing.T) {
	s, err := DecodeSnapshot("snapshot-4", readFixture(t, "pk-dv-parquet", "snapshot/snapshot-4"))
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != CommitCompact || s.IndexManifest != "index-manifest-3f491f6b-79ec-484b-aa03-f4737e96bf9a-0" ||
		s.TotalRecordCount != 10 || s.DeltaRecordCount != -1 || *s.BaseManifestListSize != 1026 ||
		s.CommitIdentifier != 2 || s.ChangelogManifestList != nil {
		t.Fatalf("unexpected snapshot: %+v", s)
	}
	// Hand-written vectors (not Jackson layout) with Long.MAX_VALUE identifiers.
	for _, name := range []string{"snapshot-v3.json", "snapshot-v3-none-field.json"} {
		s, err := DecodeSnapshot(name, readFixture(t, "rust-spec-vectors", "snapshot/"+name))
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitIdentifier != math.MaxInt64 || s.ID != 2 || s.TotalRecordCount != 4 || s.DeltaRecordCount != 2 {
			t.Fatalf("%s: %+v", name, s)
		}
		if (s.Statistics != nil) != (name == "snapshot-v3.json") {
			t.Fatalf("%s: statistics %v", name, s.Statistics)
		}
		if name == "snapshot-v3.json" && (s.ChangelogManifestList == nil || *s.ChangelogManifestList != "manifest-list-ea4b892d-edc8-4ee7-9eee-7068b83a947b-2") {
			t.Fatalf("%s: changelog list %v", name, s.ChangelogManifestList)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := newSnapshot()
	s.ID, s.SchemaID = 7, 0
	s.BaseManifestList, s.DeltaManifestList = "manifest-list-a-0", "manifest-list-a-1"
	size := int64(123)
	s.BaseManifestListSize, s.DeltaManifestListSize = &size, &size
	s.IndexManifest = "index-manifest-a-0"
	s.CommitUser, s.CommitIdentifier, s.CommitKind = "user \"x\"\n", math.MaxInt64, CommitCompact
	s.TimeMillis, s.TotalRecordCount, s.DeltaRecordCount = 1700000000000, 10, -3
	zero := int64(0)
	s.ChangelogRecordCount, s.NextRowID = &zero, &zero
	s.Properties = map[string]string{"b": "2", "a": "1"}
	data := EncodeSnapshot(s)
	back, err := DecodeSnapshot("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if again := EncodeSnapshot(back); !bytes.Equal(again, data) {
		t.Fatalf("round trip differs:\n%s\n%s", data, again)
	}
	if back.CommitUser != s.CommitUser || back.CommitIdentifier != math.MaxInt64 || back.Properties["b"] != "2" {
		t.Fatalf("round trip lost values: %+v", back)
	}
	if !strings.Contains(string(data), `"changelogManifestList" : null,`) || !strings.Contains(string(data), `"logOffsets" : { },`) {
		t.Fatalf("Paimon 1.x keys missing:\n%s", data)
	}
}

func TestSnapshotBadInput(t *testing.T) {
	good := string(readFixture(t, "pk-dv-parquet", "snapshot/snapshot-4"))
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "not a JSON object"},
		{"truncated", good[:len(good)/2], "not a JSON object"},
		{"array", "[1]", "not a JSON object"},
		{"null", "null", "not a JSON object"},
		{"no id", strings.Replace(good, `"id" : 4,`, ``, 1), `"id": missing`},
		{"bad kind", strings.Replace(good, `"COMPACT"`, `"MERGE"`, 1), "unknown kind"},
		{"string id", strings.Replace(good, `"id" : 4,`, `"id" : "x",`, 1), "not a 64-bit integer"},
		{"zero id", strings.Replace(good, `"id" : 4,`, `"id" : 0,`, 1), "below 1"},
		{"empty index", strings.Replace(good, `"index-manifest-3f491f6b-79ec-484b-aa03-f4737e96bf9a-0"`, `""`, 1), "empty file name"},
	} {
		_, err := DecodeSnapshot("snapshot/snapshot-4", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "snapshot/snapshot-4") {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	for _, rel := range []string{"snapshot/snapshot-1", "snapshot/snapshot-4", "snapshot/snapshot-6"} {
		f.Add(readFixture(f, "pk-dv-parquet", rel))
	}
	f.Add(readFixture(f, "rust-spec-vectors", "snapshot/snapshot-v3.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot("snapshot-fuzz", data)
		if err != nil {
			if !strings.Contains(err.Error(), "snapshot-fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		back, err := DecodeSnapshot("again", EncodeSnapshot(s))
		if err != nil {
			t.Fatalf("re-decode of an encoded snapshot: %v", err)
		}
		if !bytes.Equal(EncodeSnapshot(back), EncodeSnapshot(s)) {
			t.Fatal("encoding is not stable")
		}
	})
}
