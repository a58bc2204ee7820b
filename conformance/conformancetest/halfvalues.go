package conformancetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
)

// TestHalfValues runs linear_scan on every bit pattern of f16 and of bf16:
// T = 1, no initial state, a drawn from (0.5, 1), and the 65536 patterns
// in a random order as b (forward) and as the output's gradient
// (backward). Then h = a*0 + b, db = dh and da = dh*0, so each output
// element is one pattern widened and narrowed again (or multiplied by
// zero), and b must give eager's value exactly: subnormals, both zeros,
// infinities and NaNs included (a NaN as some NaN, a zero of either
// sign). It is the check that fails on a device that flushes 16-bit
// subnormals or turns a NaN into a number while widening or narrowing.
//
// One exception, logged with its count: a bf16 subnormal is an f32
// subnormal, and a Vulkan device may flush f32 subnormals to zero in
// arithmetic (the NVIDIA driver does, where the shaders do not ask for
// them to be kept), so for bf16 a subnormal result may come back as a
// zero. That error is below 2^-126, inside every tolerance gate.
func TestHalfValues(t *testing.T, b scans.Backend) {
	t.Helper()
	ref, seed := checkStart(t, b)
	const n = 1 << 16
	d := scans.Dims{B: 64, T: 1, N: n / 64, K: 1, V: 1}
	for _, dt := range []scans.DType{scans.F16, scans.BF16} {
		rng := rand.New(rand.NewPCG(seed, uint64(n+int(dt))))
		in, err := bench.InputsInit(scans.OpLinearScan, d, dt, bench.Typical, false, rng)
		if err != nil {
			t.Fatal(err)
		}
		every := func() *scans.Host {
			bits := make([]uint16, n)
			for i, p := range rng.Perm(n) {
				bits[i] = uint16(p)
			}
			h, err := scans.FromBits(dt, bits, d.B, d.T, d.N)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		in.Args[1], in.Grad = every(), every()
		fwd, err := bench.Run(ref, scans.OpLinearScan, scans.Forward, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
			want := fwd
			if dir == scans.Backward {
				if want, err = bench.Run(ref, scans.OpLinearScan, dir, in, fwd[0]); err != nil {
					t.Fatal(err)
				}
			}
			got, err := bench.Run(b, scans.OpLinearScan, dir, in, fwd[0])
			if err != nil {
				t.Fatalf("%s %s: %v", dt, dir, err)
			}
			for k := range want {
				if want[k] == nil {
					continue
				}
				w, g := want[k].Float32s(), got[k].Float32s()
				bad, flushed := 0, 0
				for i := range w {
					nan := math.IsNaN(float64(w[i]))
					if nan == math.IsNaN(float64(g[i])) && (nan || w[i] == g[i]) {
						continue
					}
					if dt == scans.BF16 && g[i] == 0 && w[i] != 0 && math.Abs(float64(w[i])) < 0x1p-126 {
						flushed++
						continue
					}
					if bad < 3 {
						t.Errorf("%s %s output %d element %d: got %v (%#04x), want %v (%#04x)", dt, dir, k, i,
							g[i], got[k].Bits()[i], w[i], want[k].Bits()[i])
					}
					bad++
				}
				if bad > 0 {
					t.Errorf("%s %s output %d: %d of %d elements differ", dt, dir, k, bad, len(w))
				}
				if flushed > 0 {
					t.Logf("%s %s output %d: %d subnormal results came back as zero (f32 subnormals flushed in arithmetic)",
						dt, dir, k, flushed)
				}
			}
		}
	}
}
