package scans

import "fmt"

// ArgError reports a bad argument to a scan: a wrong shape, element type or
// element count, a missing required input, or T = 0. It names the
// operation, the argument and what was expected.
type ArgError struct {
	Op   Op     // the operation, e.g. linear_scan
	Arg  string // the argument, e.g. "b" or "h0"
	Want string // what was expected, e.g. "f32 (B,T,D) = (2,3,4)"
	Got  string // what was passed, e.g. "f32(2,3,5)" or "nil"
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("scans: %s: argument %s: want %s, got %s", e.Op, e.Arg, e.Want, e.Got)
}

// ScanFallback is returned by a GPU backend for inputs outside its kernel
// envelope (k, v not in {1, 2, 4, 8, 16}, an odd Givens block, ...): the
// kernel does not run, and nothing is masked or miscomputed. Under
// MINGRU_SCAN=auto, dispatch answers it by running eager; when a backend is
// forced it is returned to the caller. Match it with errors.As.
type ScanFallback struct {
	Backend string // the backend that declined, e.g. "vulkan"
	Op      Op     // the operation
	Reason  string // why, e.g. "k=3 is not in {1,2,4,8,16}"
}

func (e *ScanFallback) Error() string {
	return fmt.Sprintf("%s: %s: outside the kernel envelope: %s (ScanFallback)", e.Backend, e.Op, e.Reason)
}

// UnavailableError reports a backend that cannot run on this machine or in
// this build, with a human-readable reason such as
// "CUDA not available: libcuda.so.1 not found".
type UnavailableError struct {
	Backend string
	Reason  string
}

func (e *UnavailableError) Error() string { return e.Reason }

// KernelError wraps a failure while a GPU backend ran a kernel (device lost,
// out of device memory, a failed launch). Under MINGRU_SCAN=auto dispatch
// answers it by running eager.
type KernelError struct {
	Backend string
	Op      Op
	Err     error
}

func (e *KernelError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Backend, e.Op, e.Err) }

// Unwrap returns the underlying error.
func (e *KernelError) Unwrap() error { return e.Err }
