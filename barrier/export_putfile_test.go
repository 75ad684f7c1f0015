package barrier

// PutFile is putFile, the Uploader's put of one file, for tests and
// benchmarks of the blob stores it feeds.
var PutFile = putFile
