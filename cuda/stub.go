//go:build !cuda

package cuda

import (
	"io"
	"time"

	"github.com/mingru/scans"
)

// notBuilt is the reason every call of a build without the cuda tag gives.
const notBuilt = "CUDA not built in: rebuild with -tags cuda"

// Backend is the CUDA backend. This build was made without the cuda tag:
// its Status reports that, and every operation returns a
// *scans.UnavailableError.
type Backend struct {
	// Typed gives the backend the typed method of each operation; in
	// this build each returns a *scans.UnavailableError.
	scans.Typed
}

// New returns the CUDA backend. It touches no driver.
func New() *Backend {
	b := &Backend{}
	b.Typed = scans.Typed{Runner: b}
	return b
}

var (
	_ scans.Backend      = (*Backend)(nil)
	_ scans.Instrumented = (*Backend)(nil)
	_ scans.QueuedTimer  = (*Backend)(nil)
	_ scans.CacheFlusher = (*Backend)(nil)
)

func unavailable() error { return &scans.UnavailableError{Backend: backendName, Reason: notBuilt} }

// Name returns "cuda".
func (*Backend) Name() string { return backendName }

// Status reports that CUDA is not built in.
func (*Backend) Status() scans.Status {
	return scans.Status{Backend: backendName, Reason: notBuilt}
}

// Supports returns a *scans.UnavailableError: no kernel is built in.
func (*Backend) Supports(scans.Op, scans.Dims, scans.DType) error { return unavailable() }

// Upload returns a *scans.UnavailableError.
func (*Backend) Upload(*scans.Host) (scans.Tensor, error) { return nil, unavailable() }

// Download returns a *scans.UnavailableError.
func (*Backend) Download(scans.Tensor) (*scans.Host, error) { return nil, unavailable() }

// Release returns a *scans.UnavailableError.
func (*Backend) Release(scans.Tensor) error { return unavailable() }

// Run returns a *scans.UnavailableError.
func (*Backend) Run(*scans.Call) ([]scans.Tensor, error) { return nil, unavailable() }

// LastKernelTime reports no timing: nothing ever runs.
func (*Backend) LastKernelTime() (time.Duration, bool) { return 0, false }

// PeakBytes is always 0.
func (*Backend) PeakBytes() int64 { return 0 }

// ResetPeakBytes does nothing.
func (*Backend) ResetPeakBytes() {}

// CopyBandwidth returns a *scans.UnavailableError.
func (*Backend) CopyBandwidth(int64) (float64, error) { return 0, unavailable() }

// DispatchLatency returns a *scans.UnavailableError.
func (*Backend) DispatchLatency() (time.Duration, error) { return 0, unavailable() }

// SetQueuedTiming does nothing: nothing is ever timed.
func (*Backend) SetQueuedTiming(bool) {}

// FlushCache returns a *scans.UnavailableError.
func (*Backend) FlushCache() error { return unavailable() }

// NewQueue returns the reason CUDA is not built in.
func (*Backend) NewQueue() (scans.Queue, error) { return nil, unavailable() }

// Close does nothing: the stub holds nothing.
func (*Backend) Close() error { return nil }

// CachedBytes is 0.
func (*Backend) CachedBytes() int64 { return 0 }

// EmptyCache does nothing.
func (*Backend) EmptyCache() {}

// NewOn returns the stub: CUDA is not built in.
func NewOn(int) *Backend { return New() }

// Devices returns the reason CUDA is not built in.
func (*Backend) Devices() ([]scans.DeviceInfo, error) { return nil, unavailable() }

// Sweep returns why the backend is unavailable.
func (*Backend) Sweep(io.Writer, []string, scans.LayoutTimer) error { return unavailable() }
