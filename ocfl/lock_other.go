//go:build !linux

package ocfl

import (
	"errors"
	"os"
	"syscall"
)

// tryLockRange locks the whole file with flock(2) where open file
// description record locks are not available: every object then waits for
// every other, which is correct if slower.
func tryLockRange(f *os.File, _ int64) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
