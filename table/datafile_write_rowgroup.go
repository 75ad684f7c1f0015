package table

// compactRowGroupBytes is the size past which a compaction's data file
// writer ends its row group. parquet-go keeps the pages of the open row
// group in memory until the group ends, so a writer with one group per file
// held the whole file, up to target-file-size, until Close: a maintenance
// job's memory grew with the runs it merged, that is with the state, instead
// of staying bounded. Readers take any number of row groups.
const compactRowGroupBytes = 8 << 20

// endRowGroupPast ends the open row group once it buffers at least limit
// bytes: its pages are written to the file and the next row starts a new
// group (and a new page).
func (w *DataFileWriter) endRowGroupPast(limit int64) error {
	if w.pg != nil {
		if w.pg.size()-w.out.n < limit {
			return nil
		}
		w.pageFill = 0
		return w.pg.endRowGroup()
	}
	if w.pw == nil || w.pw.Size()-w.out.n < limit {
		return nil
	}
	if w.pageFill > 0 {
		if err := w.flushPage(); err != nil {
			return err
		}
	}
	return w.pw.Flush()
}

// fileSize is the bytes written plus those still buffered (parquet-go's
// Size counts both once a row group has reached the file).
func (w *DataFileWriter) fileSize() int64 {
	if w.pg != nil {
		return w.pg.size()
	}
	if w.pw == nil {
		return w.out.n
	}
	return w.pw.Size()
}
