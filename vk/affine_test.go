//go:build cgo

package vk

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/eager"
)

// affineModule is the module of matrix_affine_scan's column layout in
// direction dir for dims d and type dt under b's knobs.
func affineModule(t *testing.T, b *Backend, dir scans.Direction, d scans.Dims, dt scans.DType) (module string, wg int) {
	t.Helper()
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	c := &call{b: b, dev: dev, op: scans.OpMatrixAffineScan, dims: d, dt: dt}
	k := c.block(dir, 0)
	return k.module, int(k.spec[specWG])
}

// TestAffineColumnPaths runs matrix_affine_scan's column layout, forward
// and backward, against eager with and without the subgroup backward
// (which forms dA in its one pass), at chunk counts the layout picks and
// at counts it never does (chunks of unequal length, a short last one,
// workgroups that are not a power of two), and checks that the subgroup
// backward runs exactly where fusedDA says.
func TestAffineColumnPaths(t *testing.T) {
	b := testBackend(t)
	b.poison = true // every output element must be written
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d; %s: shuffle width %d, subgroup alignment %d", seed, dev.name, dev.shuffleWidth(), dev.subgroupAlign())
	defer func() { b.cfg.noSubgroup, b.cfg.affineRows, b.cfg.blockChunks = false, 0, 0 }()
	b.cfg.affineRows = -1
	rows := []struct {
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
		{scans.F32, 4, 8, 130, 4, true}, // v > k: never the subgroup backward
	}
	fused := 0
	for _, noSG := range []bool{false, true} {
		b.cfg.noSubgroup = noSG
		for _, r := range rows {
			b.cfg.blockChunks = r.chunks
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				c := bench.Case{Op: scans.OpMatrixAffineScan, Dir: dir, Dims: scans.Dims{B: 3, T: r.T, N: 5, K: r.k, V: r.v},
					DType: r.dt, Regime: bench.Typical, Init: r.init}
				t.Run(fmt.Sprintf("nosg=%v/chunks=%d/%s", noSG, r.chunks, c.Name()), func(t *testing.T) {
					m, wg := affineModule(t, b, dir, c.Dims, r.dt)
					sg := strings.Contains(m, "_sg_")
					want := dir == scans.Backward && !noSG && fusedDA(r.k, r.v, wg, dev.shuffleWidth(), dev.subgroupAlign())
					if sg != want {
						t.Errorf("module %s (workgroup %d), want the subgroup backward: %v", m, wg, want)
					}
					if sg {
						fused++
					}
					if res := bench.CheckCase(b, ref, c, seed); !res.Pass {
						t.Errorf("%s: %s", m, res.Summary())
					}
				})
			}
		}
	}
	if dev.shuffleWidth() >= 8 && fused == 0 {
		t.Errorf("the subgroup backward never ran on a device with shuffles %d wide", dev.shuffleWidth())
	}
}
