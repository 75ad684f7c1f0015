package compaction

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// levelsOfSizes builds a tree with one file per level >= 1, every file
// spanning the same keys; sizes[i] is the size of level i+1's file, 0 for
// an empty level.
func levelsOfSizes(t *testing.T, sizes ...int64) *table.Levels {
	t.Helper()
	var files []table.DataFileMeta
	for i, size := range sizes {
		if size > 0 {
			files = append(files, table.DataFileMeta{FileName: fmt.Sprintf("L%d", i+1), Level: int32(i + 1), FileSize: size,
				RowCount: size, MinKey: []byte("a"), MaxKey: []byte("z")})
		}
	}
	l, err := table.NewLevels(bytes.Compare, files, len(sizes)+1)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestVacateMergeTakesTheNewestRunsBySizeRatio(t *testing.T) {
	u := table.UniversalCompaction{MaxSizeAmplificationPercent: 200, SizeRatio: 1, NumSortedRunTrigger: 5}
	tests := []struct {
		name      string
		sizes     []int64
		wantOK    bool
		wantLevel int
		wantFiles []string
	}{
		{name: "an empty level: shift instead", sizes: []int64{1, 0, 4, 16, 64}},
		{name: "level 1 already free", sizes: []int64{0, 2, 4, 16, 64}},
		{
			// The smallest pair is 3+4 (levels 2 and 3), but merging the
			// newest grows no run by one delta at a time: 1+3 = 4 takes
			// level 3's 4 too, and 8 stops before 64.
			name: "the newest runs, not the smallest pair", sizes: []int64{1, 3, 4, 64, 200},
			wantOK: true, wantLevel: 3, wantFiles: []string{"L1", "L2", "L3"},
		},
		{
			name: "geometric runs: the newest two", sizes: []int64{1, 3, 9, 27, 81},
			wantOK: true, wantLevel: 2, wantFiles: []string{"L1", "L2"},
		},
		{
			name: "equal runs: all into the max level", sizes: []int64{5, 5, 5, 5, 5},
			wantOK: true, wantLevel: 5, wantFiles: []string{"L1", "L2", "L3", "L4", "L5"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit, ok := vacateMerge(u, levelsOfSizes(t, tt.sizes...))
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (unit %+v)", ok, tt.wantOK, unit)
			}
			if !ok {
				return
			}
			var got []string
			for _, f := range unit.Files {
				got = append(got, f.FileName)
			}
			if unit.OutputLevel != tt.wantLevel || !reflect.DeepEqual(got, tt.wantFiles) {
				t.Fatalf("unit = %v -> L%d, want %v -> L%d", got, unit.OutputLevel, tt.wantFiles, tt.wantLevel)
			}
		})
	}
}
