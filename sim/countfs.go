package sim

import (
	"errors"
	"syscall"

	"github.com/lakestate/lakestate/table"
)

// countingFS counts the local faults the engine meets.
type countingFS struct {
	table.FileIO
	env *env
}

func (c *countingFS) Create(p string) (table.WritableFile, error) {
	w, err := c.FileIO.Create(p)
	if err != nil {
		return nil, c.counted(err)
	}
	return &countingFile{WritableFile: w, fs: c}, nil
}

func (c *countingFS) counted(err error) error {
	switch {
	case errors.Is(err, syscall.EIO):
		c.env.count(FaultFsyncEIO)
	case errors.Is(err, syscall.ENOSPC):
		c.env.count(FaultENOSPC)
	}
	return err
}

type countingFile struct {
	table.WritableFile
	fs *countingFS
}

func (f *countingFile) Write(p []byte) (int, error) {
	n, err := f.WritableFile.Write(p)
	if err != nil {
		err = f.fs.counted(err)
	}
	return n, err
}

func (f *countingFile) Sync() error {
	if err := f.WritableFile.Sync(); err != nil {
		return f.fs.counted(err)
	}
	return nil
}
