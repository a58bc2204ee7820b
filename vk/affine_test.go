//go:build cgo

package vk

import (
	"fmt"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// TestAffineColumnPaths runs matrix_affine_scan in the column layout,
// forward and backward, against eager at the chunk count the layout picks
// and at counts it never does (chunks of unequal length, a short last one,
// workgroups that are not a power of two, one chunk with v > 1), with and
// without an initial state, in each row width the 16-bit kernels read
// in whole words (k = 2, 4, 8, 16), with one column an invocation and,
// where v is even, two (the rule's choice for 16-bit types), each with no
// ring of loads in flight and, at k = 4 and 8, a ring of 2 steps (the
// rule's for f32 at k = 8) and in f32 also of 3 (chunks shorter than the
// ring and not a multiple of it included). The conformance matrix reaches this layout
// only where the row layout does not fit or the lanes are few.
func TestAffineColumnPaths(t *testing.T) {
	fullTier(t)
	b := testBackend(t)
	b.poison = true // every output element must be written
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	defer func() { b.cfg.affineRows, b.cfg.blockChunks, b.cfg.blockCols, b.cfg.colRing = 0, 0, 0, 0 }()
	b.cfg.affineRows = -1
	for _, r := range []struct {
		dt      scans.DType
		k, v, T int
		chunks  int // 0: the layout's
		init    bool
	}{
		{scans.F32, 8, 8, 1000, 0, true},
		{scans.F32, 4, 2, 300, 8, false},
		{scans.F16, 8, 4, 91, 6, true},
		{scans.BF16, 16, 8, 65, 4, true},
		{scans.F32, 2, 2, 200, 3, true},
		{scans.F32, 8, 8, 64, 1, false},
		{scans.F32, 4, 8, 130, 4, true},
		{scans.F16, 4, 2, 120, 4, true},
		{scans.BF16, 2, 2, 77, 3, false},
		{scans.BF16, 8, 8, 64, 1, true},
		{scans.F16, 16, 4, 40, 2, false},
		{scans.F16, 4, 4, 5, 1, true},
		{scans.F32, 8, 2, 3, 1, false},
	} {
		b.cfg.blockChunks = r.chunks
		for _, cols := range []int{1, 2} {
			if r.v%cols != 0 {
				continue
			}
			b.cfg.blockCols = cols
			rings := []int{0}
			if r.k == 4 || r.k == 8 {
				rings = append(rings, 2)
				if r.dt == scans.F32 {
					rings = append(rings, 3)
				}
			}
			for _, ring := range rings {
				b.cfg.colRing = ring + 1
				for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
					c := conformance.Case{Op: scans.OpMatrixAffineScan, Dir: dir, Dims: scans.Dims{B: 3, T: r.T, N: 5, K: r.k, V: r.v},
						DType: r.dt, Regime: bench.Typical, Init: r.init}
					t.Run(fmt.Sprintf("chunks=%d/cols=%d/ring=%d/%s", r.chunks, cols, ring, c.Name()), func(t *testing.T) {
						if res := conformance.CheckCase(b, ref, c, seed); !res.Pass {
							t.Errorf("%s", res.Summary())
						}
					})
				}
			}
		}
		b.cfg.blockCols, b.cfg.colRing = 0, 0
	}
}
