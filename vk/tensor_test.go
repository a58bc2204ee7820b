package vk

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
)

// TestAngleRange: Upload's classification of a theta for the Givens
// kernels' reduction (angleRangeOf), on random angles within pi with one
// value of each kind planted at a random place: still within pi rounded
// to the element type (no reduction), beyond it but below 2^18 or not
// finite (Cody and Waite's), a finite 2^18 or more (Payne and Hanek's).
// Values are rounded to the element type as Upload receives them.
func TestAngleRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	const n = 257
	pi32 := float32(math.Pi)
	above := math.Float32frombits(math.Float32bits(pi32) + 1)
	below18 := math.Float32frombits(math.Float32bits(1<<18) - 1) // 262143.98
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	// want per element type: f32, bf16, f16.
	for _, c := range []struct {
		v    float32
		want [3]angleRange
	}{
		{pi32, [3]angleRange{anglesTurn, anglesTurn, anglesTurn}},
		{-pi32, [3]angleRange{anglesTurn, anglesTurn, anglesTurn}},
		{3.140625, [3]angleRange{anglesTurn, anglesTurn, anglesTurn}},
		{above, [3]angleRange{anglesReduce, anglesTurn, anglesTurn}}, // rounds to pi's neighbours below in 16 bits
		{3.15625, [3]angleRange{anglesReduce, anglesReduce, anglesReduce}},
		{-100, [3]angleRange{anglesReduce, anglesReduce, anglesReduce}},
		{below18, [3]angleRange{anglesReduce, anglesAny, anglesReduce}}, // bf16 rounds it to 2^18; f16 to Inf
		{1 << 18, [3]angleRange{anglesAny, anglesAny, anglesReduce}},
		{-3e38, [3]angleRange{anglesAny, anglesAny, anglesReduce}},
		{inf, [3]angleRange{anglesReduce, anglesReduce, anglesReduce}},
		{-inf, [3]angleRange{anglesReduce, anglesReduce, anglesReduce}},
		{nan, [3]angleRange{anglesReduce, anglesReduce, anglesReduce}},
	} {
		for di, dt := range []scans.DType{scans.F32, scans.BF16, scans.F16} {
			h, err := scans.NewHost(dt, n)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				h.Set(i, float32((2*rng.Float64()-1)*math.Pi))
			}
			if got := angleRangeOf(dt, hostBytes(h)); got != anglesTurn {
				t.Errorf("%v: angles within pi: range %d, want %d", dt, got, anglesTurn)
			}
			pos := rng.IntN(n)
			h.Set(pos, c.v)
			if got := angleRangeOf(dt, hostBytes(h)); got != c.want[di] {
				t.Errorf("%v: %g (stored %g) at %d of %d: range %d, want %d", dt, c.v, h.At(pos), pos, n, got, c.want[di])
			}
		}
	}
	// Every f16 bit pattern: none needs Payne and Hanek's reduction.
	all := make([]byte, 2<<16)
	for i := 0; i < 1<<16; i++ {
		binary.LittleEndian.PutUint16(all[2*i:], uint16(i))
	}
	if got := angleRangeOf(scans.F16, all); got != anglesReduce {
		t.Errorf("every f16 value: range %d, want %d", got, anglesReduce)
	}
}

// TestAngleTurn: for every f32 angle up to pi rounded to f32, the
// reduction's multiple of 2 pi, roundEven(a * 0.159154943) in f32 as the
// kernels compute it, is 0 (so anglesTurn's kernels, which skip it, give
// the same angle), and for the next f32 above it is not.
func TestAngleTurn(t *testing.T) {
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
