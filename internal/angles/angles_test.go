package angles

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
)

// TestOf: the class of random angles within pi with one value of each
// kind planted at a random place: still within pi rounded to the element
// type, beyond it but below 2^18 or not finite, a finite 2^18 or more.
// Values are rounded to the element type as a host tensor stores them.
func TestOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	const n = 257
	pi32 := float32(math.Pi)
	above := math.Float32frombits(math.Float32bits(pi32) + 1)
	below18 := math.Float32frombits(math.Float32bits(1<<18) - 1) // 262143.98
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	// want per element type: f32, bf16, f16.
	for _, c := range []struct {
		v    float32
		want [3]Range
	}{
		{pi32, [3]Range{Turn, Turn, Turn}},
		{-pi32, [3]Range{Turn, Turn, Turn}},
		{3.140625, [3]Range{Turn, Turn, Turn}},
		{above, [3]Range{Reduce, Turn, Turn}}, // rounds to pi's neighbours below in 16 bits
		{3.15625, [3]Range{Reduce, Reduce, Reduce}},
		{-100, [3]Range{Reduce, Reduce, Reduce}},
		{below18, [3]Range{Reduce, Any, Reduce}}, // bf16 rounds it to 2^18; f16 to Inf
		{1 << 18, [3]Range{Any, Any, Reduce}},
		{-3e38, [3]Range{Any, Any, Reduce}},
		{inf, [3]Range{Reduce, Reduce, Reduce}},
		{-inf, [3]Range{Reduce, Reduce, Reduce}},
		{nan, [3]Range{Reduce, Reduce, Reduce}},
	} {
		for di, dt := range []scans.DType{scans.F32, scans.BF16, scans.F16} {
			h, err := scans.NewHost(dt, n)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				h.Set(i, float32((2*rng.Float64()-1)*math.Pi))
			}
			if got := Of(h); got != Turn {
				t.Errorf("%v: angles within pi: class %d, want %d", dt, got, Turn)
			}
			pos := rng.IntN(n)
			h.Set(pos, c.v)
			if got := Of(h); got != c.want[di] {
				t.Errorf("%v: %g (stored %g) at %d of %d: class %d, want %d", dt, c.v, h.At(pos), pos, n, got, c.want[di])
			}
		}
	}
	// Every f16 bit pattern: none needs the exact reduction.
	h, err := scans.NewHost(scans.F16, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Bits() {
		h.Bits()[i] = uint16(i)
	}
	if got := Of(h); got != Reduce {
		t.Errorf("every f16 value: class %d, want %d", got, Reduce)
	}
}

// TestTurnF32: for every f32 angle up to pi rounded to f32, the
// reduction's multiple of 2 pi, roundEven(a * 0.159154943) in f32 as the
// kernels compute it, is 0 (so Turn's kernels, which skip the reduction,
// take the same angle), and for the next f32 above it is not.
func TestTurnF32(t *testing.T) {
	c := float32(0.159154943)
	q := func(bits uint32) float64 { return math.RoundToEven(float64(math.Float32frombits(bits) * c)) }
	for b := uint32(0x40000000); b <= turnF32; b++ { // [2, pi]; below 2 the product is below 1/3
		if q(b) != 0 {
			t.Fatalf("angle %g: multiple %g, want 0", math.Float32frombits(b), q(b))
		}
	}
	if q(turnF32+1) == 0 {
		t.Errorf("angle %g: multiple 0, want 1", math.Float32frombits(turnF32+1))
	}
}
