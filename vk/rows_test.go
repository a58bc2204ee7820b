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

// TestRowLayouts runs matrix_affine_scan's row layout against eager under
// workgroup sizes and ring depths that the conformance matrix's small
// shapes do not reach (the forward takes workgroups of 64 only with many
// lanes), in every element type, with lanes that do not fill the last
// workgroup and T not a multiple of the ring.
func TestRowLayouts(t *testing.T) {
	fullTier(t)
	b := testBackend(t)
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.cfg.rowsWG, b.cfg.rowsRing = [2]int{}, [2]int{} }()
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, p := range []struct {
		wg, ring int
		dts      []scans.DType
	}{{64, 8, scans.DTypes}, {128, 2, []scans.DType{scans.F32}}} {
		if p.wg > dev.maxWorkgroup() {
			t.Logf("workgroups of %d: above the device's limit %d", p.wg, dev.maxWorkgroup())
			continue
		}
		b.cfg.rowsWG, b.cfg.rowsRing = [2]int{p.wg, p.wg}, [2]int{p.ring, p.ring}
		for _, dt := range p.dts {
			for _, d := range []scans.Dims{{B: 3, T: 37, N: 5, K: 8, V: 8}, {B: 2, T: 21, N: 7, K: 4, V: 2}} {
				for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
					c := conformance.Case{Op: scans.OpMatrixAffineScan, Dir: dir, Dims: d, DType: dt, Regime: bench.Typical, Init: dir == scans.Forward}
					t.Run(fmt.Sprintf("wg%d/ring%d/%s", p.wg, p.ring, c.Name()), func(t *testing.T) {
						cl := &call{b: b, dev: dev, op: c.Op, dims: d, dt: dt}
						if !cl.rowLayout() {
							t.Fatalf("%v does not take the row layout", d)
						}
						if k := cl.rows(dir); k.spec[specWG] != uint32(p.wg/d.K*d.K) || k.spec[specRing] != uint32(p.ring) {
							t.Fatalf("kernel specialized with workgroup %d, ring %d", k.spec[specWG], k.spec[specRing])
						}
						if res := conformance.CheckCase(b, ref, c, seed); !res.Pass {
							t.Errorf("%s", res.Summary())
						}
					})
				}
			}
		}
	}
}
