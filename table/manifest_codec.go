package table

import "fmt"

// DecodeManifest reads a manifest file (ManifestEntry records). file names the
// source in errors.
func DecodeManifest(file string, data []byte) ([]ManifestEntry, error) {
	return decodeRecords(file, data, fromAvroManifestEntry)
}

// DecodeManifestList reads a manifest list (ManifestFileMeta records).
func DecodeManifestList(file string, data []byte) ([]ManifestFileMeta, error) {
	return decodeRecords(file, data, fromAvroManifestFileMeta)
}

// DecodeIndexManifest reads an index manifest (IndexManifestEntry records).
func DecodeIndexManifest(file string, data []byte) ([]IndexManifestEntry, error) {
	return decodeRecords(file, data, fromAvroIndexManifestEntry)
}

func decodeRecords[A, T any](file string, data []byte, conv func(*A) (T, error)) ([]T, error) {
	recs, err := decodeOCF[A](file, data)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(recs))
	for i, r := range recs {
		if out[i], err = conv(r); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", file, i, err)
		}
	}
	return out, nil
}

func encodeManifest(entries []ManifestEntry, codec string, sync [16]byte) ([]byte, error) {
	recs := make([]avroManifestEntry, len(entries))
	for i, e := range entries {
		recs[i] = toAvroManifestEntry(e)
	}
	return encodeOCF(avroManifestEntrySchema, codec, sync, recs)
}

func encodeManifestList(metas []ManifestFileMeta, codec string, sync [16]byte) ([]byte, error) {
	recs := make([]avroManifestFileMeta, len(metas))
	for i, m := range metas {
		recs[i] = toAvroManifestFileMeta(m)
	}
	return encodeOCF(avroManifestListSchema, codec, sync, recs)
}

func encodeIndexManifest(entries []IndexManifestEntry, codec string, sync [16]byte) ([]byte, error) {
	recs := make([]avroIndexManifestEntry, len(entries))
	for i, e := range entries {
		recs[i] = toAvroIndexManifestEntry(e)
	}
	return encodeOCF(avroIndexManifestSchema, codec, sync, recs)
}
