package scans

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func isF16NaN(h uint16) bool  { return h&0x7c00 == 0x7c00 && h&0x03ff != 0 }
func isBF16NaN(h uint16) bool { return h&0x7f80 == 0x7f80 && h&0x007f != 0 }

// TestHalfKnownPatterns checks known f16 and bf16 bit patterns both ways.
func TestHalfKnownPatterns(t *testing.T) {
	f16 := []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                       // largest finite
		{float32(math.Ldexp(1, -14)), 0x0400}, // smallest normal
		{float32(math.Ldexp(1, -24)), 0x0001}, // smallest subnormal
		{float32(math.Ldexp(1023, -24)), 0x03ff},
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
	}
	for _, c := range f16 {
		if got := F16FromFloat32(c.f); got != c.bits {
			t.Errorf("F16FromFloat32(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
		if got := F16ToFloat32(c.bits); math.Float32bits(got) != math.Float32bits(c.f) {
			t.Errorf("F16ToFloat32(%#04x) = %g, want %g", c.bits, got, c.f)
		}
	}
	bf16 := []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{float32(math.Ldexp(255, 120)), 0x7f7f}, // largest finite, (2-2^-7)*2^127
		{float32(math.Ldexp(1, -126)), 0x0080},  // smallest normal
		{float32(math.Ldexp(1, -133)), 0x0001},  // smallest subnormal
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{float32(math.Inf(1)), 0x7f80},
		{float32(math.Inf(-1)), 0xff80},
	}
	for _, c := range bf16 {
		if got := BF16FromFloat32(c.f); got != c.bits {
			t.Errorf("BF16FromFloat32(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
		if got := BF16ToFloat32(c.bits); math.Float32bits(got) != math.Float32bits(c.f) {
			t.Errorf("BF16ToFloat32(%#04x) = %g, want %g", c.bits, got, c.f)
		}
	}
	for _, nan := range []float32{float32(math.NaN()), -float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f800100)} {
		if h := F16FromFloat32(nan); !isF16NaN(h) || h>>15 != uint16(math.Float32bits(nan)>>31) {
			t.Errorf("F16FromFloat32(NaN %#08x) = %#04x, want a NaN of the same sign", math.Float32bits(nan), h)
		}
		if h := BF16FromFloat32(nan); !isBF16NaN(h) || h>>15 != uint16(math.Float32bits(nan)>>31) {
			t.Errorf("BF16FromFloat32(NaN %#08x) = %#04x, want a NaN of the same sign", math.Float32bits(nan), h)
		}
	}
	for _, h := range []uint16{0x7e00, 0x7c01, 0xfe00} {
		if f := F16ToFloat32(h); !math.IsNaN(float64(f)) {
			t.Errorf("F16ToFloat32(%#04x) = %g, want NaN", h, f)
		}
	}
	for _, h := range []uint16{0x7fc0, 0x7f81, 0xffc0} {
		if f := BF16ToFloat32(h); !math.IsNaN(float64(f)) {
			t.Errorf("BF16ToFloat32(%#04x) = %g, want NaN", h, f)
		}
	}
}

// TestHalfRounding checks ties to even, rounding just off the midpoint,
// the subnormal range and overflow to Inf.
func TestHalfRounding(t *testing.T) {
	ld := func(m float64, e int) float32 { return float32(math.Ldexp(m, e)) }
	f16 := []struct {
		f    float32
		bits uint16
	}{
		{1 + ld(1, -11), 0x3c00},              // tie: down to even 1.0
		{1 + ld(3, -11), 0x3c02},              // tie: up to even 1+2^-9
		{1 + ld(1, -11) + ld(1, -20), 0x3c01}, // just above the tie
		{1 + ld(1, -11) - ld(1, -20), 0x3c00}, // just below the tie
		{2047 + 0.5, 0x6800},                  // 2047.5 is between 2047 and 2048 (quantum 1 up to 2048): tie to 2048
		{ld(1, -25), 0x0000},                  // half the smallest subnormal: tie to 0
		{ld(3, -25), 0x0002},                  // tie between 1 and 2 subnormal quanta: 2
		{ld(1, -25) + ld(1, -40), 0x0001},     // just above half: smallest subnormal
		{ld(1, -26), 0x0000},
		{-ld(5, -25), 0x8002},   // -2.5 quanta: tie to even 2
		{ld(2047, -25), 0x0400}, // 1023.5 quanta: tie rounds up to the smallest normal
		{65519, 0x7bff},         // below the midpoint of 65504 and 65536
		{65520, 0x7c00},         // the midpoint: ties to even = 65536 = Inf
		{1e5, 0x7c00},           // overflow
		{-1e5, 0xfc00},
		{math.MaxFloat32, 0x7c00},
	}
	for _, c := range f16 {
		if got := F16FromFloat32(c.f); got != c.bits {
			t.Errorf("F16FromFloat32(%.10g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	bf16 := []struct {
		f    float32
		bits uint16
	}{
		{1 + ld(1, -8), 0x3f80},              // tie: down to even
		{1 + ld(3, -8), 0x3f82},              // tie: up to even
		{1 + ld(1, -8) + ld(1, -23), 0x3f81}, // just above the tie
		{ld(1, -134), 0x0000},                // half the smallest subnormal: tie to 0
		{ld(3, -134), 0x0002},
		{math.MaxFloat32, 0x7f80},             // above the midpoint below 2^128: Inf
		{ld(0x1fe, 119) + ld(1, 119), 0x7f80}, // the midpoint (2-2^-8)*2^127: ties to even = Inf
		{ld(0x1fe, 119), 0x7f7f},
	}
	for _, c := range bf16 {
		if got := BF16FromFloat32(c.f); got != c.bits {
			t.Errorf("BF16FromFloat32(%.10g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
}

// TestHalfRoundTripExhaustive widens every 16-bit pattern and rounds it
// back: each finite value and infinity returns to its pattern, each NaN
// stays a NaN of the same sign.
func TestHalfRoundTripExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if back := F16FromFloat32(F16ToFloat32(h)); back != h && !(isF16NaN(h) && isF16NaN(back) && back>>15 == h>>15) {
			t.Fatalf("f16 %#04x -> %g -> %#04x", h, F16ToFloat32(h), back)
		}
		if back := BF16FromFloat32(BF16ToFloat32(h)); back != h && !(isBF16NaN(h) && isBF16NaN(back) && back>>15 == h>>15) {
			t.Fatalf("bf16 %#04x -> %g -> %#04x", h, BF16ToFloat32(h), back)
		}
	}
}

// refRound rounds x to a binary format with mant fraction bits, smallest
// normal exponent emin and largest finite value max, in float64: nearest,
// ties to even, beyond max+half a quantum to Inf.
func refRound(x float64, mant, emin int, max float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	_, e := math.Frexp(math.Abs(x)) // |x| = f * 2^e, f in [0.5, 1)
	e--                             // |x| in [2^e, 2^(e+1))
	if e < emin {
		e = emin
	}
	q := math.Ldexp(1, e-mant)
	r := math.RoundToEven(x/q) * q
	if math.Abs(r) > max {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

// TestHalfAgainstReference compares F16FromFloat32 and BF16FromFloat32 with
// a float64 reference rounding on random float32s: random bit patterns
// (every exponent), values in f16's subnormal and normal ranges, and
// midpoints between neighbouring 16-bit values and their neighbours.
func TestHalfAgainstReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	const f16Max, bf16Max = 65504, 0x1.fep127
	n := 400000
	if testing.Short() {
		n = 100000
	}
	for i := 0; i < n; i++ {
		var f float32
		switch i % 5 {
		case 0: // any bit pattern
			f = math.Float32frombits(r.Uint32())
		case 1: // f16 subnormal range
			f = float32((2*r.Float64() - 1) * math.Ldexp(1, -14))
		case 2: // f16 normal range
			f = float32(math.Ldexp(2*r.Float64()-1, r.IntN(32)-14))
		case 3: // a midpoint between two f16 values, or a float32 next to it
			h := uint16(r.IntN(0x7bff))
			mid := (float64(F16ToFloat32(h)) + float64(F16ToFloat32(h+1))) / 2
			f = math.Float32frombits(math.Float32bits(float32(mid)) + uint32(r.IntN(3)) - 1)
		case 4: // a midpoint between two bf16 values, or a float32 next to it
			h := uint16(r.IntN(0x7f7f))
			f = math.Float32frombits(uint32(h)<<16 + 0x8000 + uint32(r.IntN(3)) - 1)
		}
		if math.IsNaN(float64(f)) {
			continue
		}
		x := float64(f)
		if got, want := float64(F16ToFloat32(F16FromFloat32(f))), refRound(x, 10, -14, f16Max); got != want || math.Signbit(got) != math.Signbit(x) {
			t.Fatalf("f16: %.10g (%#08x) rounds to %.10g, want %.10g", f, math.Float32bits(f), got, want)
		}
		if got, want := float64(BF16ToFloat32(BF16FromFloat32(f))), refRound(x, 7, -126, bf16Max); got != want || math.Signbit(got) != math.Signbit(x) {
			t.Fatalf("bf16: %.10g (%#08x) rounds to %.10g, want %.10g", f, math.Float32bits(f), got, want)
		}
	}
}
