package table

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// fixtureDir is a table or vector directory under ../shared/fixtures, which
// every checkout and CI run has beside the project.
func fixtureDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "fixtures", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return dir
}

func readFixture(t testing.TB, name, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t, name), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureTable opens a Java-written fixture table read-only. Tables outside
// the profile (append-parquet has no primary key) get the metadata readers
// without the profile check.
func fixtureTable(t testing.TB, name string) *Table {
	t.Helper()
	dir := fixtureDir(t, name)
	fio := NewLocalFileIO()
	if tbl, err := Open(fio, dir); err == nil {
		return tbl
	}
	s, err := DecodeSchema("schema-0", readFixture(t, name, "schema/schema-0"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := newPathFactory(dir, s, zeroReader{})
	if err != nil {
		t.Fatal(err)
	}
	return &Table{fio: fio, dir: dir, schema: s, paths: paths,
		meta:      &metaStore{fio: fio, paths: paths, codec: avroCodecZstandard, targetSize: defaultManifestTargetSize, rand: zeroReader{}},
		snapshots: snapshotStore{fio: fio, paths: paths}}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// shortName abbreviates data-<uuid>-<n>.parquet as <first uuid group>-<n>,
// the way FIXTURE.md names files.
func shortName(name string) string {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "data-"), ".parquet")
	parts := strings.Split(name, "-")
	return parts[0] + "-" + parts[len(parts)-1]
}

// fixtureLive renders the live files of a snapshot as "<bucket path> <short name> L<level>".
func fixtureLive(t *testing.T, tbl *Table, snap int64) []string {
	t.Helper()
	files, _, err := tbl.LiveFiles(snap)
	if err != nil {
		t.Fatalf("snapshot %d: %v", snap, err)
	}
	var out []string
	for _, f := range files {
		p, err := tbl.BucketPath(f.Partition, f.Bucket)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s L%d", p, shortName(f.File.FileName), f.File.Level))
	}
	sort.Strings(out)
	return out
}

func TestFixtureLiveFilesPerSnapshot(t *testing.T) {
	for _, tc := range []struct {
		table               string
		earliest, latest    int64
		live                map[int64][]string
		deltaAdds, deltaDel map[int64]int
	}{
		{"pk-dv-parquet", 1, 6, map[int64][]string{
			1: {"f1=10/bucket-0 f19db350-0 L0", "f1=10/bucket-1 d18e5571-0 L0", "f1=20/bucket-0 6922349a-0 L0"},
			2: {"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-1 d18e5571-0 L5", "f1=20/bucket-0 6922349a-0 L5"},
			3: {"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-0 f19db350-1 L0", "f1=10/bucket-1 d18e5571-0 L5", "f1=10/bucket-1 d18e5571-1 L0", "f1=20/bucket-0 6922349a-0 L5"},
			4: {"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-0 f19db350-1 L4", "f1=10/bucket-1 d18e5571-0 L5", "f1=20/bucket-0 6922349a-0 L5"},
			5: {"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-0 f19db350-1 L4", "f1=10/bucket-1 d18e5571-0 L5", "f1=10/bucket-1 e9932532-0 L0", "f1=20/bucket-0 6922349a-0 L5"},
			6: {"f1=10/bucket-0 f19db350-0 L5", "f1=10/bucket-0 f19db350-1 L4", "f1=10/bucket-1 c5916932-0 L0", "f1=10/bucket-1 d18e5571-0 L5", "f1=10/bucket-1 e9932532-0 L0", "f1=20/bucket-0 6922349a-0 L5"},
		}, map[int64]int{1: 3, 2: 3, 3: 2, 4: 1, 5: 1, 6: 1}, map[int64]int{2: 3, 4: 2}},
		{"pk-mor-parquet", 1, 5, map[int64][]string{
			1: {"f1=10/bucket-0 dad09a29-0 L0", "f1=10/bucket-1 3a6000ce-0 L0", "f1=20/bucket-0 7c66dfe2-0 L0"},
			2: {"f1=10/bucket-0 dad09a29-0 L0", "f1=10/bucket-0 dad09a29-1 L0", "f1=10/bucket-1 3a6000ce-0 L0", "f1=10/bucket-1 3a6000ce-1 L0", "f1=20/bucket-0 7c66dfe2-0 L0"},
			3: {"f1=10/bucket-0 cf759363-0 L5", "f1=10/bucket-1 3a6000ce-0 L0", "f1=10/bucket-1 3a6000ce-1 L0", "f1=20/bucket-0 7c66dfe2-0 L5"},
			5: {"f1=10/bucket-0 cf759363-0 L5", "f1=10/bucket-1 3a6000ce-0 L0", "f1=10/bucket-1 3a6000ce-1 L0", "f1=10/bucket-1 7c8140d1-0 L0", "f1=10/bucket-1 a6394463-0 L0", "f1=20/bucket-0 7c66dfe2-0 L5"},
		}, map[int64]int{1: 3, 2: 2, 3: 2, 4: 1, 5: 1}, map[int64]int{3: 3}},
		{"append-parquet", 1, 4, map[int64][]string{
			1: {"f1=10/bucket-0 35f2719c-0 L0", "f1=20/bucket-0 ac0894ca-0 L0"},
			3: {"f1=10/bucket-0 35f2719c-0 L0", "f1=10/bucket-0 35f2719c-1 L0", "f1=10/bucket-0 35f2719c-2 L0", "f1=20/bucket-0 ac0894ca-0 L0", "f1=20/bucket-1 e0a6a424-0 L0"},
			4: {"f1=10/bucket-0 f8754699-0 L0", "f1=20/bucket-0 ac0894ca-0 L0", "f1=20/bucket-1 e0a6a424-0 L0"},
		}, map[int64]int{1: 2, 2: 2, 3: 1, 4: 1}, map[int64]int{4: 3}},
	} {
		tbl := fixtureTable(t, tc.table)
		if id, ok, err := tbl.LatestSnapshotID(); err != nil || !ok || id != tc.latest {
			t.Fatalf("%s: latest %d %v %v", tc.table, id, ok, err)
		}
		if id, ok, err := tbl.EarliestSnapshotID(); err != nil || !ok || id != tc.earliest {
			t.Fatalf("%s: earliest %d %v %v", tc.table, id, ok, err)
		}
		for snap, want := range tc.live {
			if got := fixtureLive(t, tbl, snap); !reflect.DeepEqual(got, want) {
				t.Errorf("%s snapshot %d live:\n%s\nwant\n%s", tc.table, snap, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		for snap := tc.earliest; snap <= tc.latest; snap++ {
			delta, _, err := tbl.ReadDelta(snap)
			if err != nil {
				t.Fatal(err)
			}
			adds, dels := 0, 0
			for _, e := range delta {
				if e.Kind == FileAdd {
					adds++
				} else {
					dels++
				}
			}
			if adds != tc.deltaAdds[snap] || dels != tc.deltaDel[snap] {
				t.Errorf("%s snapshot %d delta: %d adds %d deletes", tc.table, snap, adds, dels)
			}
		}
	}
}

func TestFixtureDeletionVectors(t *testing.T) {
	tbl := fixtureTable(t, "pk-dv-parquet")
	for snap := int64(1); snap <= 6; snap++ {
		_, index, err := tbl.LiveFiles(snap)
		if err != nil {
			t.Fatal(err)
		}
		if snap < 4 {
			if len(index) != 0 {
				t.Fatalf("snapshot %d has index entries before the first index manifest", snap)
			}
			continue
		}
		var got []string
		for _, e := range index {
			dvs, err := tbl.ReadDeletionVectors(e)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := tbl.BucketPath(e.Partition, e.Bucket)
			for _, r := range e.DVRanges {
				got = append(got, fmt.Sprintf("%s %s %dB %s@%d+%d card %d deleted %v",
					p, e.FileName[len(e.FileName)-2:], e.FileSize, shortName(r.DataFile), r.Offset, r.Length, *r.Cardinality, dvs[r.DataFile].ToArray()))
			}
		}
		sort.Strings(got)
		want := []string{
			"f1=10/bucket-0 -0 31B f19db350-0@1+22 card 1 deleted [0]",
			"f1=10/bucket-1 -1 31B d18e5571-0@1+22 card 1 deleted [4]",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("snapshot %d deletion vectors:\n%s", snap, strings.Join(got, "\n"))
		}
	}
	s4, _ := tbl.Snapshot(4)
	s6, _ := tbl.Snapshot(6)
	if s4.IndexManifest != "index-manifest-3f491f6b-79ec-484b-aa03-f4737e96bf9a-0" || s6.IndexManifest != s4.IndexManifest {
		t.Fatalf("index manifests %q %q", s4.IndexManifest, s6.IndexManifest)
	}
}

// The manifest-list records Java wrote equal what we compute from the
// manifests they describe: counts, buckets, levels, schema id and the
// partition stats byte for byte.
func TestFixtureManifestMetaMatchesJava(t *testing.T) {
	for _, table := range []string{"pk-dv-parquet", "pk-mor-parquet", "append-parquet"} {
		tbl := fixtureTable(t, table)
		latest, _, _ := tbl.LatestSnapshotID()
		checked := 0
		for snap := int64(1); snap <= latest; snap++ {
			s, err := tbl.Snapshot(snap)
			if err != nil {
				t.Fatal(err)
			}
			metas, err := tbl.meta.dataManifests(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, java := range metas {
				entries, err := tbl.meta.readManifest(java.FileName)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := tbl.meta.manifestMeta(java.FileName, java.FileSize, entries)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(ours, java) {
					t.Errorf("%s %s:\nours %+v\njava %+v", table, java.FileName, ours, java)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no manifests", table)
		}
	}
}
