package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakestate/lakestate/table"
)

func init() {
	register(&command{
		path:  "inspect table",
		usage: "DIR [--snapshot N] [--format jsonl|table] [--files]",
		summary: "print the live rows of a Paimon primary-key table as a batch read returns them " +
			"(sorted by primary key), or with --files its data files per partition, bucket and level",
		run: runInspectTable,
	})
}

func runInspectTable(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("inspect table", flag.ContinueOnError)
	snapshot := fs.Int64("snapshot", 0, "snapshot id to read (default: the latest)")
	format := fs.String("format", "table", "jsonl or table")
	files := fs.Bool("files", false, "list data files instead of rows")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one table directory, got %d arguments", len(pos))
	}
	if *format != "jsonl" && *format != "table" {
		return usagef("--format %q: want jsonl or table", *format)
	}
	t, err := table.Open(table.NewLocalFileIO(), pos[0])
	if err != nil {
		return err
	}
	id := *snapshot
	if id == 0 {
		latest, ok, err := t.LatestSnapshotID()
		if err != nil {
			return err
		}
		if !ok {
			return printEmpty(t.Schema(), *format, *files, stdout)
		}
		id = latest
	}
	entries, index, err := t.LiveFiles(id)
	if err != nil {
		return err
	}
	dvs, err := deletionVectorsOf(t, index)
	if err != nil {
		return err
	}
	out := &tableOutput{schema: t.Schema(), jsonl: *format == "jsonl"}
	if *files {
		err = out.files(entries, dvs)
	} else {
		err = out.rows(t, entries, dvs)
	}
	if err != nil {
		return err
	}
	return out.flush(stdout)
}

// printEmpty prints a table without snapshots: no rows, a header in table
// format.
func printEmpty(s *table.Schema, format string, files bool, stdout io.Writer) error {
	out := &tableOutput{schema: s, jsonl: format == "jsonl"}
	if files {
		out.header = fileColumns
	} else {
		out.header = userColumns(s)
	}
	return out.flush(stdout)
}

// deletionVectorsOf loads the deletion vectors of every bucket, when the
// table keeps them (readers ignore index files otherwise, as Paimon does).
func deletionVectorsOf(t *table.Table, index []table.IndexManifestEntry) (map[table.BucketKey]map[string]*roaring.Bitmap, error) {
	if !t.Schema().DeletionVectors() {
		return nil, nil
	}
	out := map[table.BucketKey]map[string]*roaring.Bitmap{}
	for _, e := range index {
		if e.IndexType != table.IndexTypeDeletionVectors {
			continue
		}
		m, err := t.ReadDeletionVectors(e)
		if err != nil {
			return nil, err
		}
		out[table.BucketKey{Partition: string(e.Partition), Bucket: e.Bucket}] = m
	}
	return out, nil
}

// tableOutput collects lines, each with a sort key, and prints them sorted:
// jsonl as is, table format aligned under a header.
type tableOutput struct {
	schema *table.Schema
	jsonl  bool
	header []string
	lines  []outputLine
}

type outputLine struct {
	key   []byte
	json  []byte
	cells []string
}

func userColumns(s *table.Schema) []string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Name)
	}
	return out
}

// rows reads the live rows as a Paimon batch read does (NewView/ScanAll:
// deletion vectors applied and level 0 skipped in deletion-vector tables,
// runs merged otherwise) and orders them by primary key.
func (o *tableOutput) rows(t *table.Table, entries []table.ManifestEntry, dvs map[table.BucketKey]map[string]*roaring.Bitmap) error {
	s := o.schema
	o.header = userColumns(s)
	v, err := table.NewView(table.ViewInput{FIO: t.FileIO(), Schema: s, Files: entries, BucketDir: t.BucketDir, DeletionVectors: dvs})
	if err != nil {
		return err
	}
	defer v.Close()
	it, err := v.ScanAll()
	if err != nil {
		return err
	}
	defer it.Close()
	var pkIdx []int
	var pkTypes []table.DataType
	for _, name := range s.PrimaryKeys {
		i := s.FieldIndex(name)
		pkIdx, pkTypes = append(pkIdx, i), append(pkTypes, s.Fields[i].Type)
	}
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = o.addRecord(rec, pkIdx, pkTypes)
		rec.Release()
		if err != nil {
			return err
		}
	}
}

func (o *tableOutput) addRecord(rec arrow.Record, pkIdx []int, pkTypes []table.DataType) error {
	fields := o.schema.Fields
	row := make([]table.Datum, len(fields))
	pk := make([]table.Datum, len(pkIdx))
	for i := range int(rec.NumRows()) {
		for c, f := range fields {
			d, err := table.DatumOf(rec.Column(c), i, f.Type)
			if err != nil {
				return fmt.Errorf("column %s: %w", f.Name, err)
			}
			row[c] = d
		}
		for k, c := range pkIdx {
			pk[k] = row[c]
		}
		l := outputLine{key: table.AppendKeyDatums(nil, pkTypes, pk)}
		if o.jsonl {
			l.json = appendJSONObject(nil, fields, row)
		} else {
			l.cells = textCells(fields, row)
		}
		o.lines = append(o.lines, l)
	}
	return nil
}

func (o *tableOutput) flush(w io.Writer) error {
	slices.SortStableFunc(o.lines, func(a, b outputLine) int { return bytes.Compare(a.key, b.key) })
	if o.jsonl {
		var buf []byte
		for _, l := range o.lines {
			buf = append(append(buf, l.json...), '\n')
		}
		_, err := w.Write(buf)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(o.header, "\t"))
	for _, l := range o.lines {
		fmt.Fprintln(tw, strings.Join(l.cells, "\t"))
	}
	return tw.Flush()
}
