package vk

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
)

// TestHasHugeAngle: Upload's test for angles that need the Givens kernels'
// exact reduction finds a single finite value of magnitude 2^18 or more
// among random ordinary angles, in f32 and bf16, at any position, and
// nothing in data without one (below 2^18, infinities, NaN, every f16).
func TestHasHugeAngle(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	const n = 257
	f32 := func(vals []float32) []byte {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	bf16 := func(vals []float32) []byte {
		b := make([]byte, 2*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(math.Float32bits(v)>>16)) // exact for the values used
		}
		return b
	}
	below := math.Float32frombits(math.Float32bits(1<<18) - 1) // 262143.98
	for _, c := range []struct {
		odd  float32
		want bool
	}{
		{1 << 18, true}, {-(1 << 18), true}, {3e38, true}, {-1e30, true}, {float32(math.MaxFloat32), true},
		{below, false}, {-below, false}, {float32(math.Inf(1)), false}, {float32(math.Inf(-1)), false},
		{float32(math.NaN()), false}, {0, false},
	} {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32((2*rng.Float64() - 1) * math.Pi)
		}
		pos := rng.IntN(n)
		vals[pos] = c.odd
		if got := hasHugeAngle(scans.F32, f32(vals)); got != c.want {
			t.Errorf("f32 %g at %d of %d: %v, want %v", c.odd, pos, n, got, c.want)
		}
		bv := math.Float32frombits(math.Float32bits(c.odd) &^ 0xffff) // c.odd truncated to bf16
		bwant := c.want
		if c.odd == below || c.odd == -below {
			bwant = false // truncates to 261120
		}
		vals[pos] = bv
		if got := hasHugeAngle(scans.BF16, bf16(vals)); got != bwant {
			t.Errorf("bf16 %g at %d of %d: %v, want %v", bv, pos, n, got, bwant)
		}
	}
	// Every f16 bit pattern (at most 65504, or Inf or NaN).
	all := make([]byte, 2<<16)
	for i := 0; i < 1<<16; i++ {
		binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
	}
	if hasHugeAngle(scans.F16, all) {
		t.Error("f16: found a huge angle")
	}
}
