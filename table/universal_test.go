package table

import (
	"fmt"
	"reflect"
	"testing"
)

// testRuns builds sorted runs newest first from "level:size" specs; every
// run is one file named r<i>.
func testRuns(specs ...string) []LevelSortedRun {
	var runs []LevelSortedRun
	for i, s := range specs {
		var level int
		var size int64
		if _, err := fmt.Sscanf(s, "%d:%d", &level, &size); err != nil {
			panic(err)
		}
		f := testFile(fmt.Sprintf("r%d", i), int32(level), "a", "z", size, 0, 0)
		runs = append(runs, LevelSortedRun{Level: level, Run: SortedRun{Files: []DataFileMeta{f}}})
	}
	return runs
}

func TestUniversalPick(t *testing.T) {
	u := UniversalCompaction{MaxSizeAmplificationPercent: 200, SizeRatio: 1, NumSortedRunTrigger: 5}
	tests := []struct {
		name      string
		trigger   int
		runs      []LevelSortedRun
		wantOK    bool
		wantLevel int
		wantFiles []string
	}{
		{name: "no runs", runs: nil},
		{name: "below trigger", runs: testRuns("0:1", "0:1", "5:100")},
		{
			// 4 newer bytes over 1 old byte is 400% > 200%: everything to the max level.
			name: "size amplification", runs: testRuns("0:1", "0:1", "0:1", "0:1", "5:1"),
			wantOK: true, wantLevel: 5, wantFiles: []string{"r0", "r1", "r2", "r3", "r4"},
		},
		{
			// Amplification 13/100 is fine; the three level-0 runs absorb each
			// other (1 -> 2 -> 3), then 3*1.01 < 10 at level 3 stops: output 3-1.
			name: "size ratio stops before a larger deep run", runs: testRuns("0:1", "0:1", "0:1", "3:10", "5:100"),
			wantOK: true, wantLevel: 2, wantFiles: []string{"r0", "r1", "r2"},
		},
		{
			// Candidate 1 at the start, next run 10: ratio not met, nothing
			// triggered by ratio; 5 runs is not above the trigger of 5.
			name: "size ratio not met", runs: testRuns("0:1", "0:10", "0:100", "0:1000", "5:100000"),
		},
		{
			// 6 runs > trigger 5: start with 6-5+1 = 2 runs (11 bytes); once
			// triggered, runs at levels 0 and 1 are absorbed whatever their
			// size (111, 1111, 11111) and the level-5 run stops it: output 4.
			name: "run count above trigger", runs: testRuns("0:1", "0:10", "0:100", "0:1000", "0:10000", "5:1000000"),
			wantOK: true, wantLevel: 4, wantFiles: []string{"r0", "r1", "r2", "r3", "r4"},
		},
		{
			// 3 runs > trigger 2: start with [L0 1, L1 100]; level 5 stops.
			name: "run count starts with two runs", trigger: 2, runs: testRuns("0:1", "1:100", "5:1000"),
			wantOK: true, wantLevel: 4, wantFiles: []string{"r0", "r1"},
		},
		{
			name: "ratio absorbs every run into the max level", trigger: 3, runs: testRuns("0:10", "0:10", "1:15", "2:30"),
			wantOK: true, wantLevel: 5, wantFiles: []string{"r0", "r1", "r2", "r3"},
		},
		{
			// 10 -> 20 -> 35, then 35*1.01 < 40 at level 2 stops: output 1.
			name: "ratio stops at a level 2 run", trigger: 3, runs: testRuns("0:10", "0:10", "1:15", "2:40"),
			wantOK: true, wantLevel: 1, wantFiles: []string{"r0", "r1", "r2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := u
			if tt.trigger != 0 {
				u.NumSortedRunTrigger = tt.trigger
			}
			unit, ok := u.Pick(6, tt.runs)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (unit %+v)", ok, tt.wantOK, unit)
			}
			if !ok {
				return
			}
			if unit.OutputLevel != tt.wantLevel || !reflect.DeepEqual(names(unit.Files), tt.wantFiles) {
				t.Fatalf("unit = %v -> L%d, want %v -> L%d", names(unit.Files), unit.OutputLevel, tt.wantFiles, tt.wantLevel)
			}
		})
	}
}

func TestUniversalPickLevel0(t *testing.T) {
	u := UniversalCompaction{MaxSizeAmplificationPercent: 200, SizeRatio: 1, NumSortedRunTrigger: 5}
	tests := []struct {
		name      string
		runs      []LevelSortedRun
		wantOK    bool
		wantLevel int
		wantFiles []string
	}{
		{name: "no level 0", runs: testRuns("4:1", "5:10")},
		{name: "only level 0 goes to the max level", runs: testRuns("0:1"), wantOK: true, wantLevel: 5, wantFiles: []string{"r0"}},
		{
			name: "level 0 below a large deep run", runs: testRuns("0:1", "0:1", "4:100", "5:1000"),
			wantOK: true, wantLevel: 3, wantFiles: []string{"r0", "r1"},
		},
		{
			name: "a level 1 run is absorbed", runs: testRuns("0:1", "1:1000", "5:100000"),
			wantOK: true, wantLevel: 4, wantFiles: []string{"r0", "r1"},
		},
		{
			name: "a similar-sized deeper run is absorbed", runs: testRuns("0:50", "3:50", "5:1000"),
			wantOK: true, wantLevel: 4, wantFiles: []string{"r0", "r1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit, ok := u.PickLevel0(6, tt.runs)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && (unit.OutputLevel != tt.wantLevel || !reflect.DeepEqual(names(unit.Files), tt.wantFiles)) {
				t.Fatalf("unit = %v -> L%d, want %v -> L%d", names(unit.Files), unit.OutputLevel, tt.wantFiles, tt.wantLevel)
			}
		})
	}
}

func TestUniversalPickForceUpLevel0(t *testing.T) {
	u := UniversalCompaction{MaxSizeAmplificationPercent: 200, SizeRatio: 1, NumSortedRunTrigger: 3}
	// Universal picks first: amplification 2/1 = 200% is not above 200%,
	// ratio 1 -> 2 absorbs the level-0 runs and the level-5 run of size 1.
	unit, ok := u.PickForceUpLevel0(6, testRuns("0:1", "0:1", "5:1"))
	if !ok || unit.OutputLevel != 5 || len(unit.Files) != 3 {
		t.Fatalf("universal pick = %v -> L%d (%v)", names(unit.Files), unit.OutputLevel, ok)
	}
	// Below the trigger universal picks nothing and level 0 is forced up.
	unit, ok = u.PickForceUpLevel0(6, testRuns("0:1", "5:1000"))
	if !ok || unit.OutputLevel != 4 || !reflect.DeepEqual(names(unit.Files), []string{"r0"}) {
		t.Fatalf("forced pick = %v -> L%d (%v)", names(unit.Files), unit.OutputLevel, ok)
	}
	if _, ok := u.PickForceUpLevel0(6, testRuns("5:1000")); ok {
		t.Fatal("a lone max-level run was picked")
	}
}

func TestUniversalPickNewest(t *testing.T) {
	u := UniversalCompaction{MaxSizeAmplificationPercent: 200, SizeRatio: 1, NumSortedRunTrigger: 5}
	tests := []struct {
		name      string
		runs      []LevelSortedRun
		count     int
		wantOK    bool
		wantLevel int
		wantFiles []string
	}{
		{name: "one run is no merge", runs: testRuns("1:1", "2:10"), count: 1},
		{name: "more runs than there are", runs: testRuns("1:1"), count: 2},
		{
			// 1+10 = 11 < 100 at level 3: the two newest go to level 2.
			name: "geometric runs: the newest two", runs: testRuns("1:1", "2:10", "3:100", "4:1000", "5:10000"), count: 2,
			wantOK: true, wantLevel: 2, wantFiles: []string{"r0", "r1"},
		},
		{
			// 4+3 = 7 >= 4 -> 11 < 16: three runs into level 3.
			name: "absorbs a run no larger than the merge", runs: testRuns("1:4", "2:3", "3:4", "4:16", "5:100"), count: 2,
			wantOK: true, wantLevel: 3, wantFiles: []string{"r0", "r1", "r2"},
		},
		{
			name: "absorbing every run writes the max level", runs: testRuns("1:5", "2:5", "3:5", "4:5", "5:5"), count: 2,
			wantOK: true, wantLevel: 5, wantFiles: []string{"r0", "r1", "r2", "r3", "r4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit, ok := u.PickNewest(6, tt.runs, tt.count)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (unit %+v)", ok, tt.wantOK, unit)
			}
			if ok && (unit.OutputLevel != tt.wantLevel || !reflect.DeepEqual(names(unit.Files), tt.wantFiles)) {
				t.Fatalf("unit = %v -> L%d, want %v -> L%d", names(unit.Files), unit.OutputLevel, tt.wantFiles, tt.wantLevel)
			}
		})
	}
}

func TestCreateUnitNeverOutputsLevel0(t *testing.T) {
	tests := []struct {
		name      string
		runs      []LevelSortedRun
		count     int
		wantLevel int
		wantFiles []string
	}{
		{name: "next run at level 0: absorb up to the first level >= 1", runs: testRuns("0:1", "0:1", "1:1", "3:1"), count: 1, wantLevel: 1, wantFiles: []string{"r0", "r1", "r2"}},
		{name: "next run at level 1 is absorbed", runs: testRuns("0:1", "1:1", "4:1"), count: 1, wantLevel: 1, wantFiles: []string{"r0", "r1"}},
		{name: "absorbing everything writes the max level", runs: testRuns("0:1", "0:1"), count: 1, wantLevel: 5, wantFiles: []string{"r0", "r1"}},
		{name: "next run at level 3", runs: testRuns("0:1", "3:1"), count: 1, wantLevel: 2, wantFiles: []string{"r0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit := createUnit(tt.runs, 5, tt.count)
			if unit.OutputLevel != tt.wantLevel || !reflect.DeepEqual(names(unit.Files), tt.wantFiles) {
				t.Fatalf("unit = %v -> L%d, want %v -> L%d", names(unit.Files), unit.OutputLevel, tt.wantFiles, tt.wantLevel)
			}
		})
	}
}

func TestShouldWaitForCompaction(t *testing.T) {
	var files []DataFileMeta
	for i := range 8 {
		files = append(files, testFile(fmt.Sprintf("f%d", i), 0, "a", "b", 1, int64(i), int64(i)))
	}
	l, err := NewLevels(nil, files, 6)
	if err != nil {
		t.Fatal(err)
	}
	if l.ShouldWaitForCompaction(8) {
		t.Fatal("8 runs stall a stop trigger of 8; Paimon stalls only above it")
	}
	if !l.ShouldWaitForCompaction(7) {
		t.Fatal("8 runs do not stall a stop trigger of 7")
	}
}

func TestCompactionOptionsOf(t *testing.T) {
	target := float64(128 << 20)
	tests := []struct {
		name    string
		opts    map[string]string
		want    CompactionOptions
		wantErr bool
	}{
		{
			name: "defaults",
			want: CompactionOptions{NumLevels: 6, NumSortedRunTrigger: 5, NumSortedRunStopTrigger: 8, MaxSizeAmplificationPercent: 200,
				SizeRatio: 1, TargetFileSize: 128 << 20, SmallFileSize: int64(target * 0.7)},
		},
		{
			name: "explicit",
			opts: map[string]string{"num-sorted-run.compaction-trigger": "3", "num-sorted-run.stop-trigger": "2", "target-file-size": "2 mb",
				"compaction.small-file-ratio": "0.5", "deletion-vectors.enabled": "true", "num-levels": "4", "compaction.size-ratio": "10"},
			want: CompactionOptions{NumLevels: 4, NumSortedRunTrigger: 3, NumSortedRunStopTrigger: 3, MaxSizeAmplificationPercent: 200,
				SizeRatio: 10, TargetFileSize: 2 << 20, SmallFileSize: 1 << 20, DeletionVectors: true},
		},
		{name: "bad size", opts: map[string]string{"target-file-size": "12 parsecs"}, wantErr: true},
		{name: "one level", opts: map[string]string{"num-levels": "1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CompactionOptionsOf(&Schema{Options: tt.opts})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tt.wantErr && got != tt.want {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseMemorySize(t *testing.T) {
	good := map[string]int64{"0": 0, "17": 17, "17b": 17, "3 bytes": 3, "64kb": 64 << 10, "2K": 2 << 10,
		"128 mb": 128 << 20, "128MB": 128 << 20, " 1 g ": 1 << 30, "2 gibibytes": 2 << 30, "1t": 1 << 40}
	for s, want := range good {
		if got, err := ParseMemorySize(s); err != nil || got != want {
			t.Errorf("ParseMemorySize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "mb", "-1", "1.5mb", "1 zb", "99999999999t"} {
		if _, err := ParseMemorySize(s); err == nil {
			t.Errorf("ParseMemorySize(%q) accepted", s)
		}
	}
}
