//go:build cgo

package vk

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/eager"
)

// givensModule is the module the backend runs for givens_scan at d.
func givensModule(t *testing.T, b *Backend, dir scans.Direction, d scans.Dims, dt scans.DType) string {
	t.Helper()
	dev, err := b.device()
	if err != nil {
		t.Fatal(err)
	}
	c := &call{b: b, dev: dev, op: scans.OpGivensScan, dims: d, dt: dt}
	return c.block(dir, 0).module
}

// subgroupGivens says whether module m is a subgroup Givens kernel,
// unchunked (givens_scan_sg_*) or chunked (givens_scan_sgc_*).
func subgroupGivens(m string) bool {
	return strings.Contains(m, "_sg_") || strings.Contains(m, "_sgc_")
}

// TestGivensKernelChoice: the subgroup kernels run exactly where the
// device's subgroups hold k/2 invocations with shuffles, and never with
// the test knob that turns them off; their chunked build exactly where
// the layout cuts T.
func TestGivensKernelChoice(t *testing.T) {
	b := testBackend(t)
	dev, _ := b.device()
	width := dev.shuffleWidth()
	t.Logf("%s: shuffle width %d", dev.name, width)
	for _, k := range []int{2, 4, 8, 16} {
		for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
			d := scans.Dims{B: 3, T: 1000, N: 5, K: k, V: 1}
			b.cfg.noSubgroup = false
			m := givensModule(t, b, dir, d, scans.F32)
			if sg := subgroupGivens(m); sg != (width >= k/2) {
				t.Errorf("k=%d %s: module %s with shuffle width %d", k, dir, m, width)
			}
			for _, c := range []struct{ chunks int }{{0}, {1}, {4}} {
				b.cfg.givensChunks = c.chunks
				_, rule, _, ok := givensSGLayout(d.B, d.T, d.N, d.K, width, dev.subgroupAlign(), dev.maxWorkgroup(), dev.maxSharedMemory())
				if c.chunks > 0 {
					rule = c.chunks
				}
				if m := givensModule(t, b, dir, d, scans.F32); ok && strings.Contains(m, "_sgc_") != (rule > 1) {
					t.Errorf("k=%d %s, %d chunks: module %s", k, dir, rule, m)
				}
			}
			b.cfg.givensChunks = 0
			// The paired angle stores: only the unchunked 16-bit
			// backward, N even, subgroups of k or more.
			for _, n := range []int{4, 5} {
				for _, dt := range []scans.DType{scans.F32, scans.BF16} {
					e := scans.Dims{B: 3, T: 1000, N: n, K: k, V: 1}
					c := &call{b: b, dev: dev, op: scans.OpGivensScan, dims: e, dt: dt}
					kn := c.block(dir, 0)
					_, chunks, _, ok := givensSGLayout(e.B, e.T, e.N, e.K, width, dev.subgroupAlign(), dev.maxWorkgroup(), dev.maxSharedMemory())
					want := ok && dir == scans.Backward && dt != scans.F32 && chunks == 1 && n%2 == 0 && width >= k
					if got := kn.spec[specPairs] != 0; got != want {
						t.Errorf("k=%d %s %s N=%d: module %s pairs %v, want %v", k, dir, dt, n, kn.module, got, want)
					}
				}
			}
			b.cfg.noSubgroup = true
			if m := givensModule(t, b, dir, d, scans.F32); subgroupGivens(m) {
				t.Errorf("k=%d %s: module %s with the subgroup kernels off", k, dir, m)
			}
		}
	}
	b.cfg.noSubgroup = false
}

// TestGivensPaths runs rows of both Givens kernels against eager: the
// kernels without subgroup operations (which the conformance matrix does
// not reach on a device with shuffles), and the subgroup kernels unchunked
// over long sequences (the matrix's few lanes always take chunks there),
// with every output filled with NaN before each kernel runs.
func TestGivensPaths(t *testing.T) {
	fullTier(t)
	b := testBackend(t)
	b.poison = true // every output element must be written
	ref := eager.New()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	type row struct {
		dt   scans.DType
		k, T int
		init bool
		n    int // N; 5 when 0
	}
	for _, p := range []struct {
		name          string
		noSG          bool
		chunks, depth int
		rows          []row
		skipNoSG      bool
	}{
		{"fallback", true, 0, 0, []row{{scans.F32, 8, 1000, true, 0}, {scans.F16, 4, 65, false, 0}, {scans.BF16, 16, 65, true, 0}}, false},
		// The 16-bit backwards' rows of angles pair with their neighbours'
		// in a subgroup (k = 2 to 8), or take atomics at the ends (k = 16
		// on a device of 8-wide subgroups, and every row n = N-1).
		{"unchunked", false, 1, 0, []row{{scans.F32, 8, 1000, true, 0}, {scans.F32, 2, 300, false, 0}, {scans.BF16, 16, 100, true, 0}, {scans.F16, 4, 37, true, 0},
			{scans.F16, 8, 41, false, 0}, {scans.BF16, 2, 50, true, 0}}, true},
		// A CPU device runs a shallower ring by default: the GPU's depth.
		// N even: the 16-bit backwards store every shared word of angle
		// gradients whole (specPairs) where the subgroups hold k or more
		// invocations; N = 2 puts several batch rows in one subgroup.
		{"paired", false, 1, 0, []row{{scans.BF16, 8, 300, true, 6}, {scans.F16, 8, 65, false, 2}, {scans.F16, 2, 100, true, 4},
			{scans.BF16, 4, 77, false, 8}, {scans.F16, 16, 50, true, 6}}, true},
		{"depth16", false, 0, givensSGDepth, []row{{scans.F32, 8, 1000, true, 0}}, true},
		{"depth16-unchunked", false, 1, givensSGDepth, []row{{scans.F32, 4, 200, false, 0}}, true},
		// The 16-bit forwards' deeper rings.
		{"depth-f16", false, 1, givensSGDepthF16, []row{{scans.F16, 8, 200, true, 0}, {scans.F16, 4, 75, false, 0}}, true},
		{"depth-bf16", false, 1, givensSGDepthBF16, []row{{scans.BF16, 8, 130, false, 0}, {scans.BF16, 2, 47, true, 0}}, true},
		// Chunk counts the layout never picks: the scan over the chunks
		// with partners missing in its last round, and chunks of unequal
		// length (the last one short, or empty: 6 chunks of 17 steps over
		// T = 90).
		{"chunks6", false, 6, 0, []row{{scans.F32, 8, 100, true, 0}, {scans.F16, 4, 90, false, 0}, {scans.BF16, 2, 61, true, 0}}, true},
		{"chunks3", false, 3, 0, []row{{scans.F32, 16, 50, true, 0}, {scans.F32, 8, 2, false, 0}}, true},
	} {
		b.cfg.noSubgroup, b.cfg.givensChunks, b.cfg.givensDepth = p.noSG, p.chunks, p.depth
		for _, r := range p.rows {
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				n := r.n
				if n == 0 {
					n = 5
				}
				c := conformance.Case{Op: scans.OpGivensScan, Dir: dir, Dims: scans.Dims{B: 3, T: r.T, N: n, K: r.k, V: 1},
					DType: r.dt, Regime: bench.Typical, Init: r.init}
				t.Run(fmt.Sprintf("%s/%s", p.name, c.Name()), func(t *testing.T) {
					m := givensModule(t, b, dir, c.Dims, r.dt)
					if p.skipNoSG && !subgroupGivens(m) {
						t.Skipf("the device has no subgroup kernel for k=%d (%s)", r.k, m)
					}
					if res := conformance.CheckCase(b, ref, c, seed); !res.Pass {
						t.Errorf("%s: %s", m, res.Summary())
					}
				})
			}
		}
	}
	b.cfg.noSubgroup, b.cfg.givensChunks, b.cfg.givensDepth = false, 0, 0
}
