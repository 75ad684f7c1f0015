package barrier

// CheckpointTimeout is the message the coordinator's clock delivers once
// checkpoint id has been pending for the configured timeout. A test on the
// real system sends it when its scenario is in place, instead of racing a
// short wall-clock timeout against checkpoints that must complete.
func CheckpointTimeout(id CheckpointID) any { return &checkpointTimeout{id: id} }
