//go:build !cgo

package vk

import (
	"errors"
	"time"

	"github.com/mingru/scans"
)

// Without cgo there is no way to call the Vulkan loader: the backend
// reports itself unavailable.

var errNoCgo = errors.New("built without cgo (CGO_ENABLED=0); rebuild with cgo to use Vulkan")

type buffer struct{ size int64 }

type execCtx struct{}

type device struct {
	name, driver string
	software     bool
	subgroupNote string
}

func openDevice(config) (*device, error)                   { return nil, errNoCgo }
func (*device) maxSharedMemory() int                       { return 0 }
func (*device) sharedMemoryLimit() int                     { return 0 }
func (*device) maxWorkgroup() int                          { return 0 }
func (*device) shuffleWidth() int                          { return 0 }
func (*device) subgroupAlign() int                         { return 0 }
func (*device) alloc(int64) (*buffer, error)               { return nil, errNoCgo }
func (*device) free(*buffer)                               {}
func (*device) write(*buffer, []byte) error                { return errNoCgo }
func (*device) read(*buffer, []byte) error                 { return errNoCgo }
func (*device) run([]kernel, int64, bool, *lastTime) error { return errNoCgo }
func (*device) settle(*execCtx)                            {}
func (*device) peakBytes() int64                           { return 0 }
func (*device) resetPeak()                                 {}
func (*device) copyBandwidth(int64) (float64, error)       { return 0, errNoCgo }
func (*device) dispatchLatency() (time.Duration, error)    { return 0, errNoCgo }
func (*device) f16Paths() string                           { return "" }
func (*device) flushCache() error                          { return errNoCgo }
func guardFromEnv() bool                                   { return false }

func validationMessages() []string { return nil }

// Queue is scans.Queue; without cgo there is no device to queue on.
type Queue struct{}

// Run returns why there is no device.
func (*Queue) Run(*scans.Call) ([]scans.Tensor, error) { return nil, errNoCgo }

// Wait returns why there is no device.
func (*Queue) Wait() error { return errNoCgo }

// NewQueue returns why there is no device.
func (b *Backend) NewQueue() (scans.Queue, error) { return nil, b.unavailable() }

func (*Backend) settle(*Tensor) error  { return nil }
func (*call) enqueue([]kernel) error   { return errNoCgo }
func (*device) isClosed() bool         { return false }
func (*device) destroy()               {}
func (*device) memory() (int64, int64) { return 0, 0 }
func (*device) emptyCache() int64      { return 0 }

// Devices returns why there is no device.
func (b *Backend) Devices() ([]scans.DeviceInfo, error) { return nil, b.unavailable() }
