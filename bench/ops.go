package bench

import (
	"fmt"

	"github.com/mingru/scans"
)

// Forward runs op's forward on b with the inputs in ArgNames order (a nil
// entry for an absent initial state) and returns the output.
func Forward(b scans.Backend, op scans.Op, args []scans.Tensor) (scans.Tensor, error) {
	if err := wantArgs(op, len(args)); err != nil {
		return nil, err
	}
	switch op {
	case scans.OpLinearScan:
		return b.LinearScan(args[0], args[1], args[2])
	case scans.OpMatrixScan:
		return b.MatrixScan(args[0], args[1], args[2])
	case scans.OpMatrixAffineScan:
		return b.MatrixAffineScan(args[0], args[1], args[2])
	case scans.OpParallelScanLog:
		return b.ParallelScanLog(args[0], args[1])
	case scans.OpGivensScan:
		return b.GivensScan(args[0], args[1], args[2], args[3])
	}
	return nil, fmt.Errorf("bench: unknown operation %q", op)
}

// Backward runs op's backward on b with the forward inputs (ArgNames
// order), the forward output out and its gradient dout, and returns the
// gradients in GradNames order (nil for an absent initial state).
func Backward(b scans.Backend, op scans.Op, args []scans.Tensor, out, dout scans.Tensor) ([]scans.Tensor, error) {
	if err := wantArgs(op, len(args)); err != nil {
		return nil, err
	}
	var g [4]scans.Tensor
	var err error
	switch op {
	case scans.OpLinearScan:
		g[0], g[1], g[2], err = b.LinearScanBackward(args[0], args[1], args[2], out, dout)
	case scans.OpMatrixScan:
		g[0], g[1], g[2], err = b.MatrixScanBackward(args[0], args[1], args[2], out, dout)
	case scans.OpMatrixAffineScan:
		g[0], g[1], g[2], err = b.MatrixAffineScanBackward(args[0], args[1], args[2], out, dout)
	case scans.OpParallelScanLog:
		g[0], g[1], err = b.ParallelScanLogBackward(args[0], args[1], out, dout)
	case scans.OpGivensScan:
		g[0], g[1], g[2], g[3], err = b.GivensScanBackward(args[0], args[1], args[2], args[3], out, dout)
	}
	if err != nil {
		return nil, err
	}
	return g[:len(args)], nil
}

func wantArgs(op scans.Op, n int) error {
	names := ArgNames(op)
	if names == nil {
		return fmt.Errorf("bench: unknown operation %q", op)
	}
	if n != len(names) {
		return fmt.Errorf("bench: %s takes %d inputs (%v), got %d", op, len(names), names, n)
	}
	return nil
}

// upload copies host tensors to b, keeping nil entries nil. On error it
// releases what it uploaded.
func upload(b scans.Backend, hs ...*scans.Host) ([]scans.Tensor, error) {
	out := make([]scans.Tensor, len(hs))
	for i, h := range hs {
		if h == nil {
			continue
		}
		t, err := b.Upload(h)
		if err != nil {
			release(b, out...)
			return nil, fmt.Errorf("upload %v: %w", h, err)
		}
		out[i] = t
	}
	return out, nil
}

// release frees every non-nil tensor and returns the first error.
func release(b scans.Backend, ts ...scans.Tensor) error {
	var first error
	for _, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		if err := b.Release(t); err != nil && first == nil {
			first = err
		}
	}
	return first
}
