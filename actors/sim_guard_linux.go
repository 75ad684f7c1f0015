package actors

import (
	"runtime"
	"syscall"
)

// On Linux the owner pins itself to its OS thread while inside a call, so no other goroutine
// runs on that thread and the thread id (a cheap syscall) identifies the owner.

func pinThread()   { runtime.LockOSThread() }
func unpinThread() { runtime.UnlockOSThread() }

func threadIdentity() int64 { return int64(syscall.Gettid()) }
