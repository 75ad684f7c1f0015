package barrier

// CheckpointTimeout is the message the coordinator's clock delivers once
// checkpoint id has been pending for the configured timeout. A test on the
// real system sends it when its scenario is in place, instead of racing a
// short wall-clock timeout against checkpoints that must complete.
func CheckpointTimeout(id CheckpointID) any { return &checkpointTimeout{id: id} }

// StrayCommitResult is a commit result of a paimon phase the Store actor
// does not know: its assertion panics on it, as on any answer that
// contradicts its state.
func StrayCommitResult(id CheckpointID) any { return &paimonCommitted{id: id} }
