// Package blobdir is the embedded BlobStore: blobs are files under a root
// directory, named by their slash paths. A put writes a temporary file under
// root/.tmp, syncs it, renames it into place and syncs the directory, so a
// crash leaves either the old state or the whole new blob;
// RemoveStaleTemporaries removes the temporary files of puts that crashed.
package blobdir
