package compaction

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// filteredFiles counts the files of levels >= 1 whose key filter the
// session holds, those files and their rows.
func filteredFiles(s *Session) (filtered, deep int, rows int64) {
	for _, tr := range s.trees {
		for _, f := range tr.levels.AllFiles() {
			if f.Level == 0 {
				continue
			}
			deep++
			rows += f.RowCount
		}
		filtered += tr.filters.Len()
	}
	return filtered, deep, rows
}

// TestKeyFiltersKeepRoundsCorrect: barrier rounds whose keys are mostly new
// (ruled out by the deeper files' key filters) and partly updates of old
// keys (which the filters must let through, or the old rows stay visible)
// keep the table equal to the model, with shaping in between, and so does
// a new session over the same table, as after a restore, whose filters are
// built on first lookup.
func TestKeyFiltersKeepRoundsCorrect(t *testing.T) {
	e := newEnv(t, 2, map[string]string{table.OptionTargetFileSize: "8kb"})
	s := e.session(Config{StepBytes: 16 << 10})
	next := int64(0)
	batch := func(i int64) map[int64]row {
		m := puts(next, next+150, "n"+itoa(i))
		next += 150
		for k := int64(0); k < next-150; k += 1 + (k*7+i)%53 {
			m[k] = puts(k, k+1, "u"+itoa(i))[k]
		}
		return m
	}
	for i := int64(0); i < 12; i++ {
		m := batch(i)
		delete(m, i*31)
		e.round(s, m, []int64{i * 31})
		e.shapeAll(s)
		e.checkModel(nil)
	}
	filtered, deep, rows := filteredFiles(s)
	if deep == 0 || filtered < deep {
		t.Fatalf("%d key filters for %d files at levels >= 1: the writer and the rounds must make one for each", filtered, deep)
	}
	// About 12 bits a row, a block of 32 bytes and a fence key per file
	// at least; the filters of files that left the tree are dropped.
	if b := int64(s.Stats().KeyFilterBytes); b > rows*3/2+int64(filtered)*96 {
		t.Fatalf("key filters take %d bytes for %d rows in %d files", b, rows, filtered)
	}
	s.Close()

	s = e.session(Config{StepBytes: 16 << 10})
	for i := int64(12); i < 20; i++ {
		m := batch(i)
		delete(m, i*29)
		e.round(s, m, []int64{i * 29})
		if i == 12 {
			if filtered, _, _ := filteredFiles(s); filtered == 0 {
				t.Fatal("the new session's first round built no key filter")
			}
		}
		e.shapeAll(s)
		e.checkModel(nil)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
