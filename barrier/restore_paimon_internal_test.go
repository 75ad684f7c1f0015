package barrier

import (
	"strings"
	"testing"
)

// A paimon table's checkpoint names its snapshot by its one snapshot file.
func TestPaimonSnapshotOf(t *testing.T) {
	files := func(paths ...string) []FileRef {
		var out []FileRef
		for _, p := range paths {
			out = append(out, FileRef{Path: p})
		}
		return out
	}
	for _, c := range []struct {
		name string
		t    TableState
		want int64
		err  string
	}{
		{"derived", TableState{Files: files("schema/schema-0", "snapshot/snapshot-7", "manifest/manifest-list-1")}, 7, ""},
		{"named", TableState{SnapshotID: 7, Files: files("snapshot/snapshot-7")}, 7, ""},
		{"other id", TableState{SnapshotID: 6, Files: files("snapshot/snapshot-7")}, 0, "names snapshot 6 but holds snapshot-7"},
		{"none", TableState{Files: files("schema/schema-0")}, 0, "this one 0"},
		{"two", TableState{Files: files("snapshot/snapshot-7", "snapshot/snapshot-8")}, 0, "this one 2"},
		{"leading zero", TableState{Files: files("snapshot/snapshot-07")}, 0, `"snapshot/snapshot-07": not a snapshot file name`},
		{"zero", TableState{Files: files("snapshot/snapshot-0")}, 0, "not a snapshot file name"},
		{"sign", TableState{Files: files("snapshot/snapshot-+7")}, 0, "not a snapshot file name"},
		{"no digits", TableState{Files: files("snapshot/snapshot-")}, 0, "not a snapshot file name"},
	} {
		got, err := paimonSnapshotOf(&c.t)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %d, %v; want an error with %q", c.name, got, err, c.err)
		}
	}
}
