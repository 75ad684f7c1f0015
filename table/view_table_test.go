package table

import (
	"testing"
)

func countRows(t *testing.T, v *View) int {
	t.Helper()
	it, err := v.ScanAll()
	return len(drain(t, it, err))
}

// Time travel over the Java-written fixtures through their manifests: the
// row counts FIXTURE.md lists per snapshot, and the latest snapshot's rows.
func TestViewOfJavaTables(t *testing.T) {
	for _, c := range []struct {
		fixture string
		counts  []int // per snapshot 1..n
		latest  []string
	}{
		{"pk-dv-parquet", []int{0, 9, 9, 8, 8, 8}, []string{
			twoRoads + "|10|1|11", "Alice|10|1|19.1", "Alex|10|0|16.1", "Bob|10|0|12.1",
			"David|10|0|17.1", "Emily|10|0|13.1", "Lucy|20|1|14.1", "Paul|20|1|18.1",
		}},
		{"pk-mor-parquet", []int{9, 8, 8, 10, 11}, []string{
			"Alice|10|1|19.1", twoRoads + "|10|1|11", "Bob|10|0|12.1", "David|10|0|17.1", "Emily|10|0|13.1",
			"Marco|10|0|21.1", "Marco2|10|0|31.1", "Skye|10|0|21", "Skye2|10|0|31", "Lucy|20|1|14.1", "Paul|20|1|18.1",
		}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			tbl, err := Open(NewLocalFileIO(), fixtureDir(t, c.fixture))
			if err != nil {
				t.Fatal(err)
			}
			var prev *View
			for i, want := range c.counts {
				v, err := tbl.ViewReusing(int64(i+1), prev)
				if err != nil {
					t.Fatal(err)
				}
				if got := countRows(t, v); got != want {
					t.Errorf("snapshot %d: %d rows, want %d", i+1, got, want)
				}
				if i == len(c.counts)-1 {
					it, err := v.ScanAll()
					if got, want := sortedJoin(drain(t, it, err)), sortedJoin(c.latest); got != want {
						t.Errorf("latest rows:\n%s\nwant\n%s", got, want)
					}
				}
				if prev != nil {
					prev.Close()
				}
				prev = v
			}
			prev.Close()
		})
	}
}
