//go:build cuda

// Package gorgoniacu connects the CUDA backend of github.com/mingru/scans
// to gorgonia.org/cu, the CUDA binding of the Go ecosystem: a cu.DevicePtr
// becomes a tensor the scans run on in place, and a tensor's memory a
// cu.DevicePtr.
//
// Importing this package needs a CUDA driver at start-up: gorgonia.org/cu
// calls cuInit in its init and ends the process where there is none. The
// scans' own cuda package does not import it for that reason; programs
// that already use gorgonia.org/cu lose nothing by importing this one.
//
// Both sides must work in the device's primary context, the one the CUDA
// backend uses: in gorgonia.org/cu, Device.RetainPrimaryCtx, then Lock it
// on the goroutine that allocates. Memory of a context gorgonia made with
// MakeContext is another context's, which Tensor reports as an error.
// It is built with the tag cuda, like the backend.
package gorgoniacu

import (
	"gorgonia.org/cu"

	"github.com/mingru/scans"
	"github.com/mingru/scans/cuda"
)

// Tensor wraps the device memory at p, allocated through gorgonia.org/cu
// in the primary context of b's device, as a tensor of b of the given
// element type and shape, without a copy (cuda.Backend.Wrap: what it
// checks and how work orders). The memory stays gorgonia's: Release ends
// the tensor, cu.MemFree frees the memory.
func Tensor(b *cuda.Backend, p cu.DevicePtr, dt scans.DType, shape ...int) (*cuda.Tensor, error) {
	return b.Wrap(uint64(p), dt, shape...)
}

// DevicePtr is the device memory of t as a cu.DevicePtr (0 once t is
// released). It stays the backend's: gorgonia.org/cu may read and write
// it while t is live, and must not free it.
func DevicePtr(t *cuda.Tensor) cu.DevicePtr { return cu.DevicePtr(t.Ptr()) }
