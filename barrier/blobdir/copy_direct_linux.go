package blobdir

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of offsets and lengths of the direct writes:
// a page, a multiple of any device's logical block size up to 4 KiB. The
// source's memory is a mapping, so its addresses are page-aligned too.
const directAlign = 4096

// copyDirect copies up to n bytes of src, from offset 0, into dst (empty, at
// offset 0) by writing the source's page-cache pages, mapped, to dst
// opened for direct I/O: the device reads the pages itself, so the bytes
// are copied by no CPU, and dst leaves no dirty page cache for the fsync to
// write back. copy_file_range on a filesystem without reflinks (ext4)
// copies each page into a new page-cache page instead, which the fsync then
// writes out. The unaligned tail (under 4 KiB) is copied by the kernel.
//
// It returns done=false, having written nothing, when direct I/O is not
// possible here (a filesystem without O_DIRECT such as tmpfs, a source not
// at offset 0, a source too small to be worth it); the caller then copies
// another way. Errors after the first byte are returned as they are.
func copyDirect(ctx context.Context, dst, src *os.File, n int64) (done bool, err error) {
	if off, err := src.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return false, nil
	}
	fi, err := src.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false, nil
	}
	n = min(n, fi.Size()) // up to n bytes, as io.CopyN copies
	aligned := n &^ (directAlign - 1)
	if aligned < directMinBytes {
		return false, nil
	}
	mem, err := unix.Mmap(int(src.Fd()), 0, int(aligned), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return false, nil
	}
	defer unix.Munmap(mem)
	dfd := int(dst.Fd())
	flags, err := unix.FcntlInt(uintptr(dfd), unix.F_GETFL, 0)
	if err != nil {
		return false, nil
	}
	if _, err := unix.FcntlInt(uintptr(dfd), unix.F_SETFL, flags|unix.O_DIRECT); err != nil {
		return false, nil
	}
	var off int64
	for off < aligned && off%directAlign == 0 { // a short write leaves the rest to the kernel copy
		if err := ctx.Err(); err != nil {
			return true, err
		}
		c := min(aligned-off, fileCopyChunk)
		w, err := unix.Pwrite(dfd, mem[off:off+c], off)
		if err == unix.EINVAL && off == 0 {
			// O_DIRECT was accepted but this filesystem or device
			// refuses these writes: nothing was written.
			_, _ = unix.FcntlInt(uintptr(dfd), unix.F_SETFL, flags)
			return false, nil
		}
		if err != nil {
			return true, err
		}
		if w == 0 {
			return true, errors.New("direct write wrote nothing")
		}
		off += int64(w)
	}
	if _, err := unix.FcntlInt(uintptr(dfd), unix.F_SETFL, flags); err != nil {
		return true, err
	}
	for off < n {
		soff, doff := off, off
		c, err := unix.CopyFileRange(int(src.Fd()), &soff, dfd, &doff, int(n-off), 0)
		if err != nil {
			return true, err
		}
		if c == 0 {
			return true, errors.New("source ended early")
		}
		off += int64(c)
	}
	return true, nil
}

// directMinBytes is the smallest source copyDirect takes: below it the
// mapping and flag changes cost more than the copy they save.
const directMinBytes = 64 << 10
