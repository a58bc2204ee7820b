//go:build !cgo

package vk

import (
	"errors"
	"time"
)

// Without cgo there is no way to call the Vulkan loader: the backend
// reports itself unavailable.

var errNoCgo = errors.New("built without cgo (CGO_ENABLED=0); rebuild with cgo to use Vulkan")

type buffer struct{ size int64 }

type device struct {
	name, driver string
	software     bool
	subgroupNote string
}

func openDevice(config) (*device, error)                               { return nil, errNoCgo }
func (*device) maxSharedMemory() int                                   { return 0 }
func (*device) sharedMemoryLimit() int                                 { return 0 }
func (*device) maxWorkgroup() int                                      { return 0 }
func (*device) shuffleWidth() int                                      { return 0 }
func (*device) subgroupAlign() int                                     { return 0 }
func (*device) alloc(int64) (*buffer, error)                           { return nil, errNoCgo }
func (*device) free(*buffer)                                           {}
func (*device) write(*buffer, []byte) error                            { return errNoCgo }
func (*device) read(*buffer, []byte) error                             { return errNoCgo }
func (*device) run([]kernel, int64, bool) (time.Duration, bool, error) { return 0, false, errNoCgo }
func (*device) peakBytes() int64                                       { return 0 }
func (*device) resetPeak()                                             {}
func (*device) copyBandwidth(int64) (float64, error)                   { return 0, errNoCgo }
func (*device) dispatchLatency() (time.Duration, error)                { return 0, errNoCgo }
func (*device) f16Paths() string                                       { return "" }
func (*device) flushCache() error                                      { return errNoCgo }
func guardFromEnv() bool                                               { return false }

func validationMessages() []string { return nil }
