// Package listing owns the live file set of one table: which data files and
// deletion-vector index files a snapshot references, with their
// table-relative paths, as a checkpoint needs them to decide what to upload.
//
// The set is state, not a query. It is seeded once by a full manifest walk
// and then advanced snapshot by snapshot by folding only the delta manifests
// committed since the last listing, so a listing costs what changed since the
// previous one, never the table's history. The index manifest is a full-state
// document and is re-read only when its name changes.
//
// [LiveSet] is the pure state machine; [Lister] is the thin actor around it
// that reads manifests on the injected executor and answers [List] requests
// with [Listed].
package listing
