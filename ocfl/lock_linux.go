package ocfl

import (
	"errors"
	"os"
	"syscall"
)

// fOFDSetLK is F_OFD_SETLK: a record lock owned by the open file
// description, not the process (Linux 3.15 and later).
const fOFDSetLK = 37

// tryLockRange takes a write lock on the byte at off of f without waiting;
// ok is false when another open holds it.
func tryLockRange(f *os.File, off int64) (bool, error) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: off, Len: 1}
	err := syscall.FcntlFlock(f.Fd(), fOFDSetLK, &lk)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
		return false, nil
	}
	return err == nil, err
}
