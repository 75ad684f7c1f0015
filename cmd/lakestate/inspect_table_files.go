package main

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lakestate/lakestate/table"
)

// fileColumns head the table output of --files.
var fileColumns = []string{"PARTITION", "BUCKET", "LEVEL", "FILE", "SIZE", "ROWS", "RETRACT_ROWS", "DV_DELETED", "SEQ", "MIN_KEY", "MAX_KEY"}

// files lists the live data files ordered by partition, bucket and level;
// level 0 newest first, other levels by min key. In jsonl each file is
// {"partition":{..},"bucket":..,"level":..,"file":..,"size":..,"rows":..,
// "retractRows":..,"dvDeleted":..,"minSeq":..,"maxSeq":..,"minKey":{..},
// "maxKey":{..}}, with partition and key values rendered as row values are;
// retractRows is null (? in table output) when the manifest does not
// record it.
func (o *tableOutput) files(entries []table.ManifestEntry, dvs map[table.BucketKey]map[string]*roaring.Bitmap) error {
	s := o.schema
	o.header = fileColumns
	partFields, err := fieldsNamed(s, s.PartitionKeys)
	if err != nil {
		return err
	}
	keyFields, err := fieldsNamed(s, s.TrimmedPrimaryKeys())
	if err != nil {
		return err
	}
	for _, e := range entries {
		f := e.File
		part, err := decodeRow(e.Partition, partFields)
		if err != nil {
			return fmt.Errorf("file %s: partition: %w", f.FileName, err)
		}
		minKey, err := decodeRow(f.MinKey, keyFields)
		if err != nil {
			return fmt.Errorf("file %s: min key: %w", f.FileName, err)
		}
		maxKey, err := decodeRow(f.MaxKey, keyFields)
		if err != nil {
			return fmt.Errorf("file %s: max key: %w", f.FileName, err)
		}
		var dvDeleted uint64
		if bm := dvs[table.BucketKey{Partition: string(e.Partition), Bucket: e.Bucket}][f.FileName]; bm != nil {
			dvDeleted = bm.GetCardinality()
		}
		l := outputLine{key: fileSortKey(e, minKey, keyFields)}
		if o.jsonl {
			retract := []byte("null")
			if f.DeleteRowCount != nil {
				retract = strconv.AppendInt(nil, *f.DeleteRowCount, 10)
			}
			j := appendJSONObject(appendJSONName([]byte{'{'}, "partition"), partFields, part)
			for _, m := range []struct {
				name  string
				value []byte
			}{
				{"bucket", strconv.AppendInt(nil, int64(e.Bucket), 10)},
				{"level", strconv.AppendInt(nil, int64(f.Level), 10)},
				{"file", appendJSONString(nil, f.FileName)},
				{"size", strconv.AppendInt(nil, f.FileSize, 10)},
				{"rows", strconv.AppendInt(nil, f.RowCount, 10)},
				{"retractRows", retract},
				{"dvDeleted", strconv.AppendUint(nil, dvDeleted, 10)},
				{"minSeq", strconv.AppendInt(nil, f.MinSequenceNumber, 10)},
				{"maxSeq", strconv.AppendInt(nil, f.MaxSequenceNumber, 10)},
			} {
				j = append(appendJSONName(append(j, ','), m.name), m.value...)
			}
			j = appendJSONObject(appendJSONName(append(j, ','), "minKey"), keyFields, minKey)
			j = appendJSONObject(appendJSONName(append(j, ','), "maxKey"), keyFields, maxKey)
			l.json = append(j, '}')
		} else {
			retract := "?"
			if f.DeleteRowCount != nil {
				retract = strconv.FormatInt(*f.DeleteRowCount, 10)
			}
			l.cells = []string{
				partitionText(partFields, part), strconv.Itoa(int(e.Bucket)), strconv.Itoa(int(f.Level)), f.FileName,
				strconv.FormatInt(f.FileSize, 10), strconv.FormatInt(f.RowCount, 10), retract,
				strconv.FormatUint(dvDeleted, 10), fmt.Sprintf("%d..%d", f.MinSequenceNumber, f.MaxSequenceNumber),
				strings.Join(textCells(keyFields, minKey), ","), strings.Join(textCells(keyFields, maxKey), ","),
			}
		}
		o.lines = append(o.lines, l)
	}
	return nil
}

func fieldsNamed(s *table.Schema, names []string) ([]table.Field, error) {
	var out []table.Field
	for _, n := range names {
		i := s.FieldIndex(n)
		if i < 0 {
			return nil, fmt.Errorf("schema %d has no field %q", s.ID, n)
		}
		out = append(out, s.Fields[i])
	}
	return out, nil
}

func decodeRow(b []byte, fields []table.Field) ([]table.Datum, error) {
	types := make([]table.DataType, len(fields))
	for i, f := range fields {
		types[i] = f.Type
	}
	return table.DecodeBinaryRow(b, types)
}

// partitionText renders a partition Hive-style (f1=10/f2=x), "-" if none.
func partitionText(fields []table.Field, part []table.Datum) string {
	if len(fields) == 0 {
		return "-"
	}
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Name + "=" + renderText(f.Type, part[i])
	}
	return strings.Join(parts, "/")
}

// fileSortKey orders files by partition, bucket, level, then newest first
// at level 0 and by min key above, then name.
func fileSortKey(e table.ManifestEntry, minKey []table.Datum, keyFields []table.Field) []byte {
	k := append([]byte(nil), e.Partition...)
	k = binary.BigEndian.AppendUint32(k, uint32(e.Bucket)^1<<31)
	k = binary.BigEndian.AppendUint32(k, uint32(e.File.Level)^1<<31)
	if e.File.Level == 0 {
		k = binary.BigEndian.AppendUint64(k, ^(uint64(e.File.MaxSequenceNumber) ^ 1<<63))
	} else {
		types := make([]table.DataType, len(keyFields))
		for i, f := range keyFields {
			types[i] = f.Type
		}
		k = table.AppendKeyDatums(k, types, minKey)
	}
	return append(k, e.File.FileName...)
}
