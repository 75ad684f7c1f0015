package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/table"
)

// TestLakestateWritesPaimonReads has lakestate write a state table with
// several snapshots, level-0 and higher-level files, deletion vectors and
// expired snapshots. lakestate inspect must return the rows the writes replay
// to, every Paimon reader must return what lakestate inspect returns, every
// row must be found again through a primary-key predicate read from the one
// bucket lakestate put it in (bucket pruning), and after Java Paimon appends
// and fully compacts as a new commit user, every reader, lakestate included,
// must return what the writes and the appended rows replay to. Then lakestate
// continues what Java left, and every reader is checked once more.
func TestLakestateWritesPaimonReads(t *testing.T) {
	h := newHarness(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	w := writeLakestateStateTable(t, dir)

	yes := true
	layout := h.java(t, h.javaVersions[0], "describe", dir)
	t.Logf("written by lakestate, as Java Paimon %s describes it: %s", h.javaVersions[0], strings.TrimSpace(layout))
	expectedLayout{LevelZero: &yes, HigherLevels: &yes, DeletionVectors: &yes, ExpiredSnapshots: &yes}.check(t, layout)
	rows := sortedLines(h.lakestateRead(t, dir))
	if want := w.visible(t); !slices.Equal(rows, want) {
		requireSameRows(t, "lakestate inspect of the table it wrote", want, strings.Join(rows, "\n"))
		t.FailNow()
	}
	h.checkAllReaders(t, "written", dir, rows, nil)
	h.java(t, h.javaVersions[0], "lookup-all", dir)
	for _, v := range h.javaVersions {
		w.checkLookup(t, h, v, dir, w.probe)
	}

	// Java restates a key whose newest write is still in level 0 (the
	// restatement is newer and wins once level 0 is compacted), deletes a
	// key, inserts one, and fully compacts every bucket.
	appended := filepath.Join(t.TempDir(), "append.jsonl")
	if err := os.WriteFile(appended, jsonLines(t, w.appended), 0o644); err != nil {
		t.Fatal(err)
	}
	last := h.javaVersions[len(h.javaVersions)-1]
	h.java(t, last, "append-compact", dir, appended)
	h.checkAllReaders(t, "continued-by-"+last, dir, w.spec.expectedRows(t, w.appended), nil)
	if err := table.CheckTable(openTable(t, dir), latestSnapshot(t, dir)); err != nil {
		t.Fatalf("the table Java continued breaks an invariant lakestate relies on: %v", err)
	}

	// lakestate takes the table back, as a restored subtask and a new
	// maintenance session would: a checkpoint over Java's files, whose round
	// marks superseded rows of Java-written files in deletion vectors.
	again := []jsonRow{stateRow(0, 0, 6), stateRow(1, 5, 6), stateRow(3, 50, 6), stateRow(2, 60, 6), deleteRow(2, 10)}
	lakestateCheckpoint(t, dir, again, int64(len(w.spec.Commits)+1))
	h.checkAllReaders(t, "continued-by-lakestate", dir, w.spec.expectedRows(t, append(slices.Clone(w.appended), again...)), nil)
}

// lakestateCheckpoint commits one checkpoint of rows to a table and runs its
// maintenance round, through new table handles and a new session.
func lakestateCheckpoint(t *testing.T, dir string, rows []jsonRow, commitID int64) {
	t.Helper()
	writer := openTable(t, dir)
	session, err := compaction.NewSession(openTable(t, dir), compaction.Config{CommitUser: "lakestate-maintenance", CheckInvariants: true}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	now := int64(1_800_000_000_000)
	rec, kinds := recordOf(t, writer.Schema(), rows)
	res, err := writer.WriteAndCommit(rec, kinds, table.CommitInfo{User: "lakestate-subtask-0", Identifier: commitID, TimeMillis: now})
	rec.Release()
	if err != nil {
		t.Fatalf("checkpoint %d: %v", commitID, err)
	}
	round, err := session.Barrier(res.SnapshotID, now)
	if err != nil {
		t.Fatalf("maintenance round of checkpoint %d: %v", commitID, err)
	}
	if !round.Committed {
		t.Fatalf("maintenance round of checkpoint %d committed nothing", commitID)
	}
}

// stateTable is what writeLakestateStateTable wrote, as the oracle replays it.
type stateTable struct {
	// spec holds every commit lakestate made, the last one still in level 0.
	spec *tableSpec
	// compacted is how many of the commits a maintenance round moved out of
	// level 0: the ones a deletion-vector batch read sees.
	compacted int
	// appended are the rows Java appends to continue the table.
	appended []jsonRow
	// probe is a live row to look up by its primary key.
	probe jsonRow
	// buckets of the table.
	buckets int
}

// visible is what a batch read of the table returns: the compacted commits.
func (w *stateTable) visible(t *testing.T) []string {
	s := *w.spec
	s.Commits = s.Commits[:w.compacted]
	return s.expectedRows(t, nil)
}

// stateFields are the columns of the state table: a key group and a string
// key (the primary key; the key group is the bucket key, as in a subtask's
// state tables) and a value of every type lakestate stores.
var stateFields = [][2]string{
	{"kg", "INT"}, {"name", "STRING"},
	{"b", "BOOLEAN"}, {"t", "TINYINT"}, {"s", "SMALLINT"}, {"i", "INT"}, {"v", "BIGINT"},
	{"f", "FLOAT"}, {"d", "DOUBLE"}, {"str", "STRING"}, {"bin", "BYTES"},
	{"dec", "DECIMAL(10, 2)"}, {"wide", "DECIMAL(38, 10)"}, {"day", "DATE"},
	{"ts3", "TIMESTAMP(3)"}, {"ts6", "TIMESTAMP(6)"}, {"ts9", "TIMESTAMP(9)"},
}

const stateBuckets = 4

// writeLakestateStateTable writes a state table the way a subtask and its
// maintenance session do: each checkpoint's writes are one level-0 commit
// (table.WriteAndCommit), and the maintenance round of compaction.Session
// moves them to a level >= 1, marking the rows they supersede in deletion
// vectors. Three checkpoints are compacted (levels 5, 4 and 3 of 4 buckets,
// deletes dropped, deletion vectors on the deeper levels); table.Expire then
// removes the oldest snapshots; a last commit stays in level 0.
func writeLakestateStateTable(t *testing.T, dir string) *stateTable {
	t.Helper()
	w := &stateTable{spec: &tableSpec{PrimaryKeys: []string{"kg", "name"}}, buckets: stateBuckets}
	schema := table.Schema{
		PrimaryKeys: w.spec.PrimaryKeys,
		// As the subtask's state tables: the key group alone picks the bucket.
		Options:    map[string]string{table.OptionBucket: fmt.Sprint(stateBuckets), table.OptionBucketKey: "kg"},
		TimeMillis: 1_790_000_000_000,
	}
	for _, f := range stateFields {
		typ, err := table.ParseDataType(f[1])
		if err != nil {
			t.Fatal(err)
		}
		schema.Fields = append(schema.Fields, table.Field{Name: f[0], Type: typ})
		w.spec.Fields = append(w.spec.Fields, struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}{f[0], f[1]})
	}
	writer, err := table.Create(table.NewLocalFileIO(), dir, schema)
	if err != nil {
		t.Fatal(err)
	}
	maintained, err := table.Open(table.NewLocalFileIO(), dir)
	if err != nil {
		t.Fatal(err)
	}
	session, err := compaction.NewSession(maintained, compaction.Config{CommitUser: "lakestate-maintenance", CheckInvariants: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	now := schema.TimeMillis
	checkpoint := func(rows []jsonRow, compact bool) {
		t.Helper()
		now += 1000
		n := int64(len(w.spec.Commits) + 1)
		rec, kinds := recordOf(t, writer.Schema(), rows)
		res, err := writer.WriteAndCommit(rec, kinds, table.CommitInfo{User: "lakestate-subtask-0", Identifier: n, TimeMillis: now})
		rec.Release()
		if err != nil {
			t.Fatalf("checkpoint %d: %v", n, err)
		}
		w.spec.Commits = append(w.spec.Commits, struct {
			Rows []jsonRow `json:"rows"`
		}{rows})
		if !compact {
			return
		}
		round, err := session.Barrier(res.SnapshotID, now)
		if err != nil {
			t.Fatalf("maintenance round of checkpoint %d: %v", n, err)
		}
		if !round.Committed {
			t.Fatalf("maintenance round of checkpoint %d committed nothing", n)
		}
		w.compacted = len(w.spec.Commits)
	}

	// Checkpoint 1: 52 keys in 4 key groups, among them the edge values of
	// every type; the round moves them to the max level.
	var first []jsonRow
	for kg := range 4 {
		for n := range 12 {
			first = append(first, stateRow(kg, n, 1))
		}
	}
	first = append(first, edgeRows()...)
	checkpoint(first, true)
	// Checkpoints 2 and 3 update, delete and insert keys; their rounds move
	// them to levels 4 and 3 and mark what they supersede in deletion
	// vectors (the deletes are rewritten and dropped).
	checkpoint([]jsonRow{
		stateRow(0, 1, 2), stateRow(0, 3, 2), stateRow(1, 4, 2), stateRow(2, 5, 2), stateRow(3, 6, 2),
		stateRow(3, 11, 2), stateRow(1, 20, 2), stateRow(2, 21, 2),
		deleteRow(0, 2), deleteRow(1, 7), deleteRow(2, 8), deleteRow(3, 9),
	}, true)
	checkpoint([]jsonRow{
		stateRow(0, 1, 3), stateRow(1, 4, 3), stateRow(1, 5, 3), stateRow(2, 10, 3), stateRow(3, 30, 3),
		deleteRow(0, 3), deleteRow(2, 21), deleteRow(3, 10),
	}, true)
	expired, err := writer.Expire(2, table.PinSet{})
	if err != nil {
		t.Fatal(err)
	}
	if len(expired.Expired) == 0 {
		t.Fatal("expiration removed no snapshot")
	}
	// Checkpoint 4 waits for its round: it stays in level 0, invisible to
	// batch reads of a deletion-vector table until a compaction moves it.
	checkpoint([]jsonRow{
		stateRow(0, 4, 4), stateRow(1, 5, 4), stateRow(2, 6, 4), stateRow(3, 7, 4), stateRow(0, 40, 4),
		deleteRow(1, 6), deleteRow(3, 8),
	}, false)

	w.appended = []jsonRow{
		stateRow(1, 5, 5),                  // newer than checkpoint 4's level-0 write
		withKind(stateRow(2, 11, 1), "-D"), // a key in the max level
		stateRow(3, 50, 5),                 // a new key
		withKind(stateRow(0, 40, 4), "-D"), // a key only level 0 holds
		stateRow(2, 6, 4),                  // the same row checkpoint 4 wrote
	}
	w.probe = stateRow(1, 4, 3)
	return w
}

// stateRow is version v of key (kg, "key-n"): every column set, some null.
func stateRow(kg, n, v int) jsonRow {
	x := kg*100 + n*7 + v*1000
	r := jsonRow{
		"kg":   raw(kg),
		"name": raw(fmt.Sprintf("key-%02d", n)),
		"b":    raw(x%2 == 0),
		"t":    raw(int8(x)),
		"s":    raw(int16(x * 31)),
		"i":    raw(int32(x * 1_000_003)),
		"v":    raw(int64(x) * 1_000_000_007),
		"f":    raw(float32(x) / 8),
		"d":    raw(float64(x) / 3),
		"str":  raw(fmt.Sprintf("group %d key %d version %d", kg, n, v)),
		"bin":  raw([]byte{byte(kg), byte(n), byte(v)}),
		"dec":  raw(fmt.Sprintf("%d.%02d", x, n)),
		"wide": raw(fmt.Sprintf("%d.%010d", x*1_000_000_000, n*v)),
		"day":  raw(fmt.Sprintf("2026-%02d-%02d", n%12+1, kg*7+v)),
		"ts3":  raw(fmt.Sprintf("2026-11-%02dT%02d:%02d:00.%03d", v, kg, n%60, x%1000)),
		"ts6":  raw(fmt.Sprintf("1999-12-31T23:%02d:%02d.%06d", n%60, v, x)),
		"ts9":  raw(fmt.Sprintf("2026-11-30T08:%02d:%02d.%09d", n%60, kg, x*1001)),
	}
	if n%5 == 4 { // every nullable type also stores nulls
		for _, c := range []string{"b", "f", "bin", "wide", "ts9"} {
			r[c] = json.RawMessage("null")
		}
	}
	return r
}

// edgeRows are four keys ("edge-N" in key group N) with extreme values,
// which no later checkpoint changes.
func edgeRows() []jsonRow {
	rows := []jsonRow{
		{"b": raw(true), "t": raw(-128), "s": raw(32767), "i": raw(-2147483648), "v": raw(int64(math.MinInt64)),
			"f": json.RawMessage("0.1"), "d": json.RawMessage("0.1"), "str": raw("plain"), "bin": raw([]byte{0, 1, 2, 255}),
			"dec": raw("12.30"), "wide": raw("1234567890123456789012345678.0123456789"), "day": raw("2024-02-29"),
			"ts3": raw("2024-10-10T10:10:10.123"), "ts6": raw("2024-10-10T10:10:10.123456"), "ts9": raw("2024-10-10T10:10:10.123456789")},
		{"b": raw(false), "t": raw(127), "s": raw(-32768), "i": raw(2147483647), "v": raw(int64(math.MaxInt64)),
			"f": json.RawMessage("-1.5"), "d": json.RawMessage("1e+21"), "str": raw("<tag> & \"quoted\" \\ back"), "bin": raw([]byte{}),
			"dec": raw("-0.01"), "wide": raw("-0.0000000001"), "day": raw("1969-12-31"),
			"ts3": raw("1969-12-31T23:59:59.999"), "ts6": raw("1900-01-01T00:00:00.000001"), "ts9": raw("1969-12-31T23:59:59.999999999")},
		{"f": json.RawMessage("3.4028235e+38"), "d": json.RawMessage("1e-07"), "str": raw("line\nbreak\ttab\r\b\f"),
			"dec": raw("99999999.99"), "wide": raw("0.0000000000"), "day": raw("1900-01-01"), "ts3": raw("1970-01-01T00:00:00.000")},
		{"f": json.RawMessage("-0"), "d": raw("NaN"), "str": raw("é ü 日本 😀 \u2028sep\u2029"), "bin": raw([]byte{255}),
			"dec": raw("0.00"), "ts6": raw("1970-01-01T00:00:00.000000")},
	}
	for n, r := range rows {
		r["kg"], r["name"] = raw(n), raw(fmt.Sprintf("edge-%d", n))
	}
	return rows
}

// deleteRow retracts key (kg, "key-n"): only the key is set.
func deleteRow(kg, n int) jsonRow {
	return jsonRow{"_kind": raw("-D"), "kg": raw(kg), "name": raw(fmt.Sprintf("key-%02d", n))}
}

func withKind(r jsonRow, kind string) jsonRow {
	r["_kind"] = raw(kind)
	return r
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// recordOf turns harness rows into a record of the table's Arrow schema and
// their change kinds, as a subtask's write buffer hands them to the table.
// Arrow's JSON reader skips the "_kind" member, as it is no column.
func recordOf(t *testing.T, s *table.Schema, rows []jsonRow) (arrow.RecordBatch, []table.ValueKind) {
	t.Helper()
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []table.ValueKind
	for _, r := range rows {
		switch string(r["_kind"]) {
		case "", `"+I"`:
			kinds = append(kinds, table.KindInsert)
		case `"+U"`:
			kinds = append(kinds, table.KindUpdateAfter)
		case `"-U"`:
			kinds = append(kinds, table.KindUpdateBefore)
		case `"-D"`:
			kinds = append(kinds, table.KindDelete)
		default:
			t.Fatalf("row %v: unknown _kind", r)
		}
	}
	text, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sch, bytes.NewReader(text))
	if err != nil {
		t.Fatalf("rows as %s: %v", sch, err)
	}
	return rec, kinds
}

// jsonLines is rows as the JSONL the Java harness reads.
func jsonLines(t *testing.T, rows []jsonRow) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

var bucketsRead = regexp.MustCompile(`buckets read: \[([0-9, ]*)\]`)

// checkLookup reads one row through Java with an equality predicate on its
// primary key: the read must return exactly that row, and its plan must read
// exactly the one bucket lakestate's bucket function puts the key in.
func (w *stateTable) checkLookup(t *testing.T, h *harness, version, dir string, r jsonRow) {
	t.Helper()
	var name string
	if err := json.Unmarshal(r["name"], &name); err != nil {
		t.Fatal(err)
	}
	var kg int32
	if err := json.Unmarshal(r["kg"], &kg); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(h.interopDir, "paimon-java"), version, "lookup", dir, fmt.Sprintf("kg=%d", kg), "name="+name)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("paimon-java %s lookup: %v\n%s", version, err, stderr.String())
	}
	s := *w.spec
	s.Commits = []struct {
		Rows []jsonRow `json:"rows"`
	}{{Rows: []jsonRow{r}}}
	requireSameRows(t, "java-paimon-"+version+" lookup", s.expectedRows(t, nil), stdout.String())

	bucketKey := table.EncodeBinaryRow([]table.DataType{table.Int().NotNull()}, []table.Datum{table.IntDatum(int64(kg))})
	want := fmt.Sprint(table.Bucket(bucketKey, w.buckets))
	m := bucketsRead.FindStringSubmatch(stderr.String())
	if m == nil || m[1] != want {
		t.Errorf("java-paimon-%s lookup of kg=%d name=%s: plan read %q, want only bucket %s (where lakestate wrote it)",
			version, kg, name, strings.TrimSpace(stderr.String()), want)
	}
}

func openTable(t *testing.T, dir string) *table.Table {
	t.Helper()
	tb, err := table.Open(table.NewLocalFileIO(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func latestSnapshot(t *testing.T, dir string) int64 {
	t.Helper()
	id, ok, err := openTable(t, dir).LatestSnapshotID()
	if err != nil || !ok {
		t.Fatalf("%s: no latest snapshot: %v", dir, err)
	}
	return id
}
