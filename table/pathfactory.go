package table

import (
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/google/uuid"
)

// Directory and file-name prefixes of a Paimon table.
const (
	schemaDirName         = "schema"
	snapshotDirName       = "snapshot"
	manifestDirName       = "manifest"
	indexDirName          = "index"
	schemaFilePrefix      = "schema-"
	snapshotFilePrefix    = "snapshot-"
	manifestFilePrefix    = "manifest-"
	manifestListPrefix    = "manifest-list-"
	indexManifestPrefix   = "index-manifest-"
	indexFilePrefix       = "index-"
	dataFilePrefix        = "data-"
	bucketDirPrefix       = "bucket-"
	defaultPartitionValue = "__DEFAULT_PARTITION__"
)

// pathFactory names and places the files of one table. New names are
// <prefix><uuid>-<n>: the uuid is drawn once per factory (one per open Table)
// from the table's random source, n counts up, so two writers never collide
// and a seeded source gives the same names run after run.
type pathFactory struct {
	dir       string
	uuid      string
	counter   atomic.Int64
	partition []Field // partition fields in key order
}

func newPathFactory(dir string, s *Schema, rnd io.Reader) (*pathFactory, error) {
	id, err := uuid.NewRandomFromReader(rnd)
	if err != nil {
		return nil, fmt.Errorf("table %s: draw a file-name uuid: %w", dir, err)
	}
	pf := &pathFactory{dir: dir, uuid: id.String()}
	for _, k := range s.PartitionKeys {
		pf.partition = append(pf.partition, s.Fields[s.FieldIndex(k)])
	}
	return pf, nil
}

func (p *pathFactory) newName(prefix, suffix string) string {
	n := p.counter.Add(1) - 1
	return prefix + p.uuid + "-" + strconv.FormatInt(n, 10) + suffix
}

func (p *pathFactory) newManifestName() string      { return p.newName(manifestFilePrefix, "") }
func (p *pathFactory) newManifestListName() string  { return p.newName(manifestListPrefix, "") }
func (p *pathFactory) newIndexManifestName() string { return p.newName(indexManifestPrefix, "") }
func (p *pathFactory) newIndexFileName() string     { return p.newName(indexFilePrefix, "") }
func (p *pathFactory) newDataFileName() string      { return p.newName(dataFilePrefix, ".parquet") }

func (p *pathFactory) schemaDir() string   { return path.Join(p.dir, schemaDirName) }
func (p *pathFactory) snapshotDir() string { return path.Join(p.dir, snapshotDirName) }
func (p *pathFactory) manifestDir() string { return path.Join(p.dir, manifestDirName) }
func (p *pathFactory) indexDir() string    { return path.Join(p.dir, indexDirName) }

func (p *pathFactory) schemaPath(id int64) string {
	return path.Join(p.schemaDir(), schemaFilePrefix+strconv.FormatInt(id, 10))
}

func (p *pathFactory) snapshotPath(id int64) string {
	return path.Join(p.snapshotDir(), snapshotFilePrefix+strconv.FormatInt(id, 10))
}

func (p *pathFactory) manifestPath(name string) string { return path.Join(p.manifestDir(), name) }
func (p *pathFactory) indexPath(name string) string    { return path.Join(p.indexDir(), name) }

// bucketDir is [<k>=<v>/...]bucket-<b> under the table directory.
func (p *pathFactory) bucketDir(partition []byte, bucket int32) (string, error) {
	rel, err := p.partitionPath(partition)
	if err != nil {
		return "", err
	}
	return path.Join(p.dir, rel, bucketDirPrefix+strconv.Itoa(int(bucket))), nil
}

// partitionPath renders a partition row Hive-style, the way Paimon names
// partition directories (values by their string form, escaped; null or empty
// values become the default partition name).
func (p *pathFactory) partitionPath(partition []byte) (string, error) {
	if len(p.partition) == 0 {
		return "", nil
	}
	types := make([]DataType, len(p.partition))
	for i, f := range p.partition {
		types[i] = f.Type
	}
	vals, err := DecodeBinaryRow(partition, types)
	if err != nil {
		return "", fmt.Errorf("partition row: %w", err)
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		s, err := partitionValueString(p.partition[i], v)
		if err != nil {
			return "", err
		}
		parts[i] = escapePathName(p.partition[i].Name) + "=" + escapePathName(s)
	}
	return strings.Join(parts, "/"), nil
}

func partitionValueString(f Field, v Datum) (string, error) {
	if v.Null {
		return defaultPartitionValue, nil
	}
	switch f.Type.Root {
	case TypeBoolean:
		return strconv.FormatBool(v.Int != 0), nil
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt, TypeDate:
		// partition.legacy-name=true (Paimon's default) renders a DATE as
		// its internal value, the epoch day.
		return strconv.FormatInt(v.Int, 10), nil
	case TypeString:
		if len(v.Bytes) == 0 {
			return defaultPartitionValue, nil
		}
		return string(v.Bytes), nil
	}
	return "", fmt.Errorf("partition field %s: type %s is not supported in partition paths", f.Name, f.Type)
}

// escapePathName escapes the characters Hive and Paimon escape in partition
// path segments as %XX.
func escapePathName(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(`"#%'*/:=?\{}[]^`, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
