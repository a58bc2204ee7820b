package scans

import (
	"fmt"
	"time"
)

// Op names one of the six scan operations, as SPEC and the benchmark
// tables spell it.
type Op string

// The operations.
const (
	OpLinearScan       Op = "linear_scan"
	OpMatrixScan       Op = "matrix_scan"
	OpMatrixAffineScan Op = "matrix_affine_scan"
	OpParallelScanLog  Op = "parallel_scan_log"
	OpGivensScan       Op = "givens_scan"
	OpMingruScan       Op = "mingru_scan"
)

// Ops lists every operation in a fixed order.
var Ops = []Op{OpLinearScan, OpMatrixScan, OpMatrixAffineScan, OpParallelScanLog, OpGivensScan, OpMingruScan}

// ParseOp turns an operation's name into an Op.
func ParseOp(s string) (Op, error) {
	for _, op := range Ops {
		if string(op) == s {
			return op, nil
		}
	}
	return "", fmt.Errorf("scans: unknown operation %q (want one of %v)", s, Ops)
}

// Direction is forward or backward.
type Direction string

// The two directions.
const (
	Forward  Direction = "forward"
	Backward Direction = "backward"
)

// Status says whether a backend can run here, and on what.
type Status struct {
	Backend   string // "eager", "vulkan" or "cuda"
	Available bool
	Reason    string // why it is not available (empty when it is)
	Device    string // device name when available, e.g. "NVIDIA H200"
	Driver    string // driver and API version when available
	// Software is true for a device that runs on the CPU (Mesa's lavapipe,
	// SwiftShader). MINGRU_SCAN=auto does not pick such a device over the
	// eager backend; naming the backend explicitly still uses it.
	Software bool
	// Notes is what the backend found out about the device that bears on
	// its kernels (the Vulkan backend: which f16 widening and narrowing
	// they use), or empty.
	Notes string
}

// String is one line: "vulkan: available on NVIDIA H200 (driver 580.95, Vulkan 1.4)",
// then "; " and the notes if any, or "cuda: CUDA not built in: rebuild
// with -tags cuda".
func (s Status) String() string {
	if !s.Available {
		return s.Backend + ": " + s.Reason
	}
	out := s.Backend + ": available"
	if s.Device != "" {
		out += " on " + s.Device
	}
	if s.Driver != "" {
		out += " (" + s.Driver + ")"
	}
	if s.Notes != "" {
		out += "; " + s.Notes
	}
	return out
}

// Backend runs the scans on one kind of device. Package eager implements it
// on the host; packages vk and cuda on GPUs; package dispatch chooses among
// them. A backend's operations accept only tensors it holds (its own
// Upload's results, or outputs of its own operations) and return tensors it
// holds. Every method is safe for concurrent use.
//
// Run is the one entry point of the operations: it takes a described call
// (the op table's Spec says each operation's arguments and results) and
// returns the results. Typed gives any Backend the typed method of each
// operation.
type Backend interface {
	// Name is "eager", "vulkan" or "cuda".
	Name() string
	// Status reports whether the backend can run here. The first call may
	// initialize the device; a backend never touches a driver before.
	Status() Status
	// Supports returns nil when the backend's kernels serve op at dims for
	// element type dt, and a *ScanFallback otherwise.
	Supports(op Op, d Dims, dt DType) error

	// Upload copies a host tensor to the backend.
	Upload(h *Host) (Tensor, error)
	// Download copies a tensor of the backend's to the host.
	Download(t Tensor) (*Host, error)
	// Release frees a tensor's device memory; using it afterwards is an
	// error. It is a no-op for host tensors.
	Release(t Tensor) error

	// Run runs c and returns its results in Spec(c.Op).Results(c.Dir)
	// order: the forward's output, or the backward's gradients (nil for
	// an absent optional input). It first names any argument that is not
	// one of the backend's tensors, then checks c unless c.Checked().
	Run(c *Call) ([]Tensor, error)
}

// Instrumented is implemented by GPU backends for benchmarks: device-side
// timing, memory accounting and the device's own copy bandwidth.
type Instrumented interface {
	// LastKernelTime is the device time (from timestamps or events) that
	// the kernels of the most recent completed operation took, and false
	// when no operation has completed yet.
	LastKernelTime() (time.Duration, bool)
	// PeakBytes is the largest number of device bytes held at once since
	// the last ResetPeakBytes.
	PeakBytes() int64
	// ResetPeakBytes sets the peak to what is held now.
	ResetPeakBytes()
	// CopyBandwidth times device-to-device copies of a buffer of the given
	// size and returns bytes moved per second, counting bytes read plus
	// bytes written (the ceiling a scan's bandwidth is compared with).
	CopyBandwidth(bytes int64) (float64, error)
	// DispatchLatency is the measured device time of an empty kernel
	// launch, the fixed cost each launch adds.
	DispatchLatency() (time.Duration, error)
}

// CacheFlusher is implemented by a GPU backend that can evict the device's
// last-level cache: FlushCache writes a device buffer of FlushBytes, at
// least twice the last-level cache of the GPUs the library runs on, and
// waits for it, so that the next operation reads its inputs from device
// memory ("cold L2", as the contract's timing method asks). Benchmarks
// call it before each timed run, outside the timed region.
type CacheFlusher interface {
	FlushCache() error
}

// FlushBytes is the size of the buffer a CacheFlusher writes: 256 MiB,
// over twice the L2 of NVIDIA's H100, H200 and B200 (50 to 126 MB) and
// the Infinity Cache of AMD's Radeon GPUs (up to 128 MB).
const FlushBytes = 256 << 20

// QueuedTimer is implemented by an Instrumented backend whose
// LastKernelTime would otherwise include the host's time to submit an
// operation: CUDA's pair of events around a launch from the host measures
// the device idling until the launch arrives. With queued timing on, each
// operation waits in the device's queue behind a short busy kernel until
// the host has enqueued all of it, so LastKernelTime is the device's own
// time from the operation's first kernel to its last, as timestamps
// written into a recorded command buffer (Vulkan's) measure it. Each
// operation then costs tens of microseconds of device time more: it is
// for benchmarks (scanbench turns it on for every timed run), not for a
// training loop.
type QueuedTimer interface {
	SetQueuedTiming(on bool)
}
