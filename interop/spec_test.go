package interop

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tableSpec is a table for the Java harness to create and fill
// (testdata/java-write/*.json; Writes.java reads the same file).
type tableSpec struct {
	Fields []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"fields"`
	PrimaryKeys []string       `json:"primaryKeys"`
	Expect      expectedLayout `json:"expect"`
	// KnownIssues names readers that cannot read this table, and why.
	KnownIssues map[string]string `json:"knownIssues"`
	Commits     []struct {
		Rows []jsonRow `json:"rows"`
	} `json:"commits"`
}

// jsonRow is one row as the harness writes it: column name to JSON value,
// plus an optional "_kind" (+I, -U, +U, -D).
type jsonRow map[string]json.RawMessage

func loadSpec(t *testing.T, path string) *tableSpec {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s tableSpec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &s
}

func loadRows(t *testing.T, path string) []jsonRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []jsonRow
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r jsonRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// expectedRows replays the spec's commits and then the extra rows with the
// deduplicate merge engine (the last write of a key wins, -D and -U remove it)
// and renders the surviving rows as `lakestate inspect table` does. It is the
// oracle every reader is held to.
func (s *tableSpec) expectedRows(t *testing.T, extra []jsonRow) []string {
	t.Helper()
	types := make([]columnType, len(s.Fields))
	for i, f := range s.Fields {
		types[i] = parseColumnType(f.Type)
	}
	live := map[string]string{}
	apply := func(r jsonRow) {
		var line, key strings.Builder
		line.WriteByte('{')
		for i, f := range s.Fields {
			v, err := types[i].render(r[f.Name])
			if err != nil {
				t.Fatalf("column %s of %v: %v", f.Name, r, err)
			}
			if i > 0 {
				line.WriteByte(',')
			}
			name, _ := json.Marshal(f.Name)
			line.Write(name)
			line.WriteByte(':')
			line.WriteString(v)
			if slices.Contains(s.PrimaryKeys, f.Name) {
				key.WriteString(v + "\x00")
			}
		}
		line.WriteByte('}')
		switch kind := string(r["_kind"]); kind {
		case "", `"+I"`, `"+U"`:
			live[key.String()] = line.String()
		case `"-D"`, `"-U"`:
			delete(live, key.String())
		default:
			t.Fatalf("row %v: unknown _kind %s", r, kind)
		}
	}
	for _, c := range s.Commits {
		for _, r := range c.Rows {
			apply(r)
		}
	}
	for _, r := range extra {
		apply(r)
	}
	rows := make([]string, 0, len(live))
	for _, l := range live {
		rows = append(rows, l)
	}
	slices.Sort(rows)
	return rows
}

// columnType is a Paimon type as the oracle renders it.
type columnType struct {
	root             string
	precision, scale int
}

var typePattern = regexp.MustCompile(`^([A-Z]+)(?:\((\d+)(?:,\s*(\d+))?\))?`)

func parseColumnType(s string) columnType {
	m := typePattern.FindStringSubmatch(strings.ToUpper(s))
	c := columnType{root: m[1]}
	c.precision, _ = strconv.Atoi(m[2])
	c.scale, _ = strconv.Atoi(m[3])
	if c.root == "TIMESTAMP" && m[2] == "" {
		c.precision = 6
	}
	return c
}

// render is the jsonl text of one value, per cmd/lakestate/inspect_render.go.
func (c columnType) render(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "null", nil
	}
	var text string
	quoted := raw[0] == '"'
	if quoted {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", err
		}
	}
	if raw[0] == '{' { // {"repeat": TEXT, "times": N}, a large string
		var r struct {
			Repeat string
			Times  int
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return "", err
		}
		text, quoted = strings.Repeat(r.Repeat, r.Times), true
	}
	jsonString := func(s string) (string, error) {
		b, err := json.Marshal(s)
		return string(b), err
	}
	switch c.root {
	case "BOOLEAN":
		b, err := strconv.ParseBool(string(raw))
		return strconv.FormatBool(b), err
	case "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT":
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return strconv.FormatInt(n, 10), err
	case "FLOAT", "DOUBLE":
		if quoted { // NaN, Infinity, -Infinity
			return jsonString(text)
		}
		bits := 64
		if c.root == "FLOAT" {
			bits = 32
		}
		f, err := strconv.ParseFloat(string(raw), bits)
		return strconv.FormatFloat(f, 'g', -1, bits), err
	case "CHAR", "VARCHAR", "STRING":
		return jsonString(text)
	case "BINARY", "VARBINARY", "BYTES":
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return "", err
		}
		return jsonString(base64.StdEncoding.EncodeToString(b))
	case "DECIMAL":
		r, ok := new(big.Rat).SetString(text)
		if !ok {
			return "", fmt.Errorf("not a decimal: %q", text)
		}
		s := r.FloatString(c.scale)
		if back, _ := new(big.Rat).SetString(s); back.Cmp(r) != 0 {
			return "", fmt.Errorf("%s has more than %d fraction digits", text, c.scale)
		}
		return jsonString(s)
	case "DATE":
		d, err := time.Parse(time.DateOnly, text)
		if err != nil {
			return "", err
		}
		return jsonString(d.Format(time.DateOnly))
	case "TIMESTAMP":
		ts, err := time.Parse("2006-01-02T15:04:05.999999999", text)
		if err != nil {
			return "", err
		}
		s := ts.Format("2006-01-02T15:04:05")
		frac := fmt.Sprintf("%09d", ts.Nanosecond())
		if strings.Trim(frac[c.precision:], "0") != "" {
			return "", fmt.Errorf("%s has more than %d fraction digits", text, c.precision)
		}
		if c.precision > 0 {
			s += "." + frac[:c.precision]
		}
		return jsonString(s)
	}
	return "", fmt.Errorf("type %s not supported by the interop oracle", c.root)
}

// tableLayout is what `paimon-java describe` reports of a table's latest snapshot.
type tableLayout struct {
	EarliestSnapshot int64          `json:"earliestSnapshot"`
	LatestSnapshot   int64          `json:"latestSnapshot"`
	FilesPerLevel    map[string]int `json:"filesPerLevel"`
	Buckets          int            `json:"buckets"`
	DeletionVectors  int            `json:"deletionVectors"`
}

// expectedLayout says which shapes a table must have, so that a test cannot
// pass on a table too simple to exercise what it claims; nil means either way.
type expectedLayout struct {
	LevelZero        *bool `json:"levelZero"`
	HigherLevels     *bool `json:"higherLevels"`
	DeletionVectors  *bool `json:"deletionVectors"`
	ExpiredSnapshots *bool `json:"expiredSnapshots"`
}

func (e expectedLayout) check(t *testing.T, describeOutput string) {
	t.Helper()
	var l tableLayout
	if err := json.Unmarshal([]byte(describeOutput), &l); err != nil {
		t.Fatalf("describe output %q: %v", describeOutput, err)
	}
	higher := 0
	for level, n := range l.FilesPerLevel {
		if level != "0" {
			higher += n
		}
	}
	for _, c := range []struct {
		what string
		want *bool
		got  bool
	}{
		{"level-0 files", e.LevelZero, l.FilesPerLevel["0"] > 0},
		{"files at level >= 1", e.HigherLevels, higher > 0},
		{"deletion vectors", e.DeletionVectors, l.DeletionVectors > 0},
		{"expired snapshots", e.ExpiredSnapshots, l.EarliestSnapshot > 1},
	} {
		if c.want != nil && *c.want != c.got {
			t.Errorf("table layout %s: has %s = %v, want %v", describeOutput, c.what, c.got, *c.want)
		}
	}
}
