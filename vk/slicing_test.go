//go:build cgo

package vk

import (
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// TestSlicedBatch forces a tiny maxStorageBufferRange so that every
// operation is processed in slices of the batch, with bindings starting at
// aligned offsets and slices starting inside them (odd element offsets for
// 16-bit types), and compares with eager.
func TestSlicedBatch(t *testing.T) {
	b := testBackend(t)
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	full := b.dev.maxRange
	defer func() { b.dev.maxRange = full }()
	rows := 0
	for _, dt := range scans.DTypes {
		for _, c := range []conformance.Case{
			{Op: scans.OpLinearScan, Dims: scans.Dims{B: 7, T: 65, N: 5, K: 1, V: 1}, Init: true},
			{Op: scans.OpParallelScanLog, Dims: scans.Dims{B: 7, T: 65, N: 3, K: 1, V: 1}},
			{Op: scans.OpMatrixScan, Dims: scans.Dims{B: 7, T: 9, N: 3, K: 2, V: 1}, Init: true},
			{Op: scans.OpMatrixAffineScan, Dims: scans.Dims{B: 7, T: 5, N: 3, K: 4, V: 2}, Init: true},
			{Op: scans.OpMatrixAffineScan, Dims: scans.Dims{B: 6, T: 3, N: 1, K: 2, V: 1}},
			{Op: scans.OpGivensScan, Dims: scans.Dims{B: 7, T: 5, N: 3, K: 4, V: 1}, Init: true},
		} {
			// Two batch entries of the largest tensor per slice.
			per := int64(0)
			args, out, err := bench.ArgShapes(c.Op, c.Dims)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(args, out) {
				if s == nil {
					continue
				}
				if n := int64(scans.NumElements(s[1:])) * int64(dt.Size()); n > per {
					per = n
				}
			}
			limit := 2*per + b.dev.align + 8
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				c.Dir, c.DType, c.Regime = dir, dt, bench.Typical
				// The forward output feeding the backward is computed by
				// eager inside CheckCase, so only this op runs sliced.
				b.dev.maxRange = limit
				r := conformance.CheckCase(b, ref, c, seed)
				rows++
				if !r.Pass {
					t.Errorf("sliced (maxStorageBufferRange %d): %s", limit, r.Summary())
				}
				if n := b.dev.lastDispatches.Load(); n < 3 {
					t.Errorf("%s: %d dispatches, want the batch split into slices", c.Name(), n)
				}
			}
		}
	}
	t.Logf("%d sliced rows checked", rows)
}
