package table

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func drain(t *testing.T, it RecordIterator, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var rows []string
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowStrings(rec)...)
		rec.Release()
	}
}

func sortedJoin(rows []string) string {
	rows = slices.Clone(rows)
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

func TestScanAllPKDVFixture(t *testing.T) {
	v := pkDVView(t)
	it, err := v.ScanAll()
	got := drain(t, it, err)
	want := []string{
		twoRoads + "|10|1|11", "Alice|10|1|19.1", "Alex|10|0|16.1", "Bob|10|0|12.1",
		"David|10|0|17.1", "Emily|10|0|13.1", "Lucy|20|1|14.1", "Paul|20|1|18.1",
	}
	if sortedJoin(got) != sortedJoin(want) {
		t.Fatalf("got\n%s\nwant\n%s", sortedJoin(got), sortedJoin(want))
	}
}

func TestScanAllPKMORFixture(t *testing.T) {
	v := pkMORView(t)
	it, err := v.ScanAll()
	got := drain(t, it, err)
	want := []string{
		"Alice|10|1|19.1", twoRoads + "|10|1|11", "Bob|10|0|12.1", "David|10|0|17.1", "Emily|10|0|13.1",
		"Marco|10|0|21.1", "Marco2|10|0|31.1", "Skye|10|0|21", "Skye2|10|0|31", "Lucy|20|1|14.1", "Paul|20|1|18.1",
	}
	if sortedJoin(got) != sortedJoin(want) {
		t.Fatalf("got\n%s\nwant\n%s", sortedJoin(got), sortedJoin(want))
	}
}
