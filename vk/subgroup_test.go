//go:build cgo

package vk

import (
	"strings"
	"testing"

	"github.com/mingru/scans"
)

// probeRecords makes the probe's output for workgroups of wg invocations
// on a device that runs subgroups of run invocations but reports size
// (size == run on a correct device).
func probeRecords(wg, groups, size, run int) []uint32 {
	w := make([]uint32, probeWords*wg*groups)
	for g := 0; g < groups; g++ {
		for l := 0; l < wg; l++ {
			id, i := l/run, l%run
			self := func(j int) uint32 { return uint32(id*size + j) }
			r := w[(g*wg+l)*probeWords:]
			r[0], r[1], r[2], r[3] = uint32(size), uint32(id), uint32(wg/run), uint32(i)
			// A shuffle reaches index j modulo the reported size; a lane
			// the subgroup does not have returns 0.
			at := func(j int) uint32 {
				if j >= run {
					return 0
				}
				return self(j)
			}
			r[4], r[5], r[6] = at((i+1)%size), at((i+size-1)%size), at((i^1)%size)
			r[7] = probeDone
		}
	}
	return w
}

// TestShuffleProbeCheck: the probe's check passes what a correct device
// writes at every subgroup size and fails what a device that reports
// wider subgroups than it runs writes, a wrong shuffle, and a record
// never written.
func TestShuffleProbeCheck(t *testing.T) {
	for _, size := range []int{1, 4, 8, 16, 32, 64, 128} {
		for _, wg := range []int{size, 2 * size, 256} {
			if wg < size {
				continue
			}
			if why := checkShuffleProbe(probeRecords(wg, 2, size, size), wg, size, size); why != "" {
				t.Errorf("size %d wg %d: a correct device fails: %s", size, wg, why)
			}
		}
	}
	// Mesa 22's lavapipe at LP_NATIVE_VECTOR_WIDTH=2048.
	if why := checkShuffleProbe(probeRecords(64, 2, 64, 16), 64, 64, 64); !strings.Contains(why, "gl_NumSubgroups is 4") {
		t.Errorf("subgroups of 64 run 16 wide: %q", why)
	}
	w := probeRecords(64, 2, 32, 32)
	w[5*probeWords+4]++
	if why := checkShuffleProbe(w, 64, 32, 32); !strings.Contains(why, "shuffle") {
		t.Errorf("a wrong shuffle: %q", why)
	}
	w = probeRecords(64, 2, 32, 32)
	w[70*probeWords+7] = 0
	if why := checkShuffleProbe(w, 64, 32, 32); !strings.Contains(why, "did not run") {
		t.Errorf("a record not written: %q", why)
	}
	if why := checkShuffleProbe(probeRecords(64, 2, 16, 16), 64, 32, 64); !strings.Contains(why, "gl_SubgroupSize is 16") {
		t.Errorf("a size below the reported least: %q", why)
	}
}

// A device whose subgroup size varies between pipelines runs the subgroup
// kernels only where its pipelines can require full subgroups.
func TestVaryingSubgroups(t *testing.T) {
	for _, c := range []struct {
		min, max int
		full, ok bool
	}{{8, 8, false, true}, {32, 32, true, true}, {8, 32, true, true}, {8, 32, false, false}, {32, 64, false, false}} {
		if why := varyingWithoutControl(c.min, c.max, c.full); (why == "") != c.ok {
			t.Errorf("sizes %d to %d, full %v: %q", c.min, c.max, c.full, why)
		}
	}
}

// TestSubgroupProbe: the device's probe verdict is in its status notes,
// and the subgroup Givens kernels run exactly where it passed.
func TestSubgroupProbe(t *testing.T) {
	b := testBackend(t)
	d, _ := b.device()
	notes := b.Status().Notes
	on := strings.Contains(notes, "subgroup kernels: on")
	if !on && !strings.Contains(notes, "subgroup kernels: off (") {
		t.Fatalf("status notes say nothing of the subgroup kernels: %s", notes)
	}
	t.Logf("%s: %s", d.name, d.subgroupNote)
	if on != (d.shuffleWidth() > 0) {
		t.Errorf("notes %q with shuffle width %d", d.subgroupNote, d.shuffleWidth())
	}
	m := givensModule(t, b, scans.Forward, scans.Dims{B: 3, T: 100, N: 5, K: 8, V: 1}, scans.F32)
	if subgroupGivens(m) != on {
		t.Errorf("module %s with %q", m, d.subgroupNote)
	}
}
