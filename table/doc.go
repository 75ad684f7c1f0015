// Package table reads and writes Apache Paimon primary-key tables in a local
// directory, byte-compatible with Paimon 1.x readers for one profile: a fixed
// bucket count >= 1, parquet data files, the deduplicate merge engine,
// deletion vectors, one writer per bucket and one compactor.
//
// It owns the on-disk format (schema and snapshot JSON, Avro manifests,
// BinaryRow, parquet data files, deletion-vector index files), the commit
// protocol (exclusive snapshot publication, conflict detection, idempotent
// retry, expiration with caller pins), the reads (key probe, key-group range
// scan, prefix range scan, full scan, all returning Arrow records) and the LSM
// primitives that compaction drives. It holds no policy and no actors, and it
// imports no other package of the project.
package table
