//go:build !linux

package actors

// Without a cheap thread id the goroutine id itself is the identity: slower, equally strict.

func pinThread()   {}
func unpinThread() {}

func threadIdentity() int64 { return goroutineID() }
