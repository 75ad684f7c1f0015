package table

// Change is the commit of a compaction result of one bucket: its files as
// DELETE and ADD entries, and the bucket's complete new deletion-vector set
// when it changed (an empty set removes the bucket's vector file).
func (r CompactResult) Change(partition []byte, bucket int32) CompactChange {
	var ch CompactChange
	for _, f := range r.Deleted {
		ch.Deleted = append(ch.Deleted, ManifestEntry{Kind: FileDelete, Partition: partition, Bucket: bucket, File: f})
	}
	for _, f := range r.Added {
		ch.Added = append(ch.Added, ManifestEntry{Kind: FileAdd, Partition: partition, Bucket: bucket, File: f})
	}
	if r.DVChanged {
		ch.DVFiles = []BucketDV{{Partition: partition, Bucket: bucket, Vectors: r.DVs}}
	}
	return ch
}
