//go:build !cuda

package cuda

import (
	"time"

	"github.com/mingru/scans"
)

// notBuilt is the reason every call of a build without the cuda tag gives.
const notBuilt = "CUDA not built in: rebuild with -tags cuda"

// Backend is the CUDA backend. This build was made without the cuda tag:
// its Status reports that, and every operation returns a
// *scans.UnavailableError.
type Backend struct{}

// New returns the CUDA backend. It touches no driver.
func New() *Backend { return &Backend{} }

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

// LinearScan returns a *scans.UnavailableError.
func (*Backend) LinearScan(a, b, h0 scans.Tensor) (scans.Tensor, error) { return nil, unavailable() }

// LinearScanBackward returns a *scans.UnavailableError.
func (*Backend) LinearScanBackward(a, b, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	return nil, nil, nil, unavailable()
}

// MatrixScan returns a *scans.UnavailableError.
func (*Backend) MatrixScan(A, b, h0 scans.Tensor) (scans.Tensor, error) { return nil, unavailable() }

// MatrixScanBackward returns a *scans.UnavailableError.
func (*Backend) MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	return nil, nil, nil, unavailable()
}

// MatrixAffineScan returns a *scans.UnavailableError.
func (*Backend) MatrixAffineScan(A, X, H0 scans.Tensor) (scans.Tensor, error) {
	return nil, unavailable()
}

// MatrixAffineScanBackward returns a *scans.UnavailableError.
func (*Backend) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	return nil, nil, nil, unavailable()
}

// ParallelScanLog returns a *scans.UnavailableError.
func (*Backend) ParallelScanLog(logCoeffs, logValues scans.Tensor) (scans.Tensor, error) {
	return nil, unavailable()
}

// ParallelScanLogBackward returns a *scans.UnavailableError.
func (*Backend) ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	return nil, nil, unavailable()
}

// GivensScan returns a *scans.UnavailableError.
func (*Backend) GivensScan(theta, sigma, x, h0 scans.Tensor) (scans.Tensor, error) {
	return nil, unavailable()
}

// GivensScanBackward returns a *scans.UnavailableError.
func (*Backend) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	return nil, nil, nil, nil, unavailable()
}

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
