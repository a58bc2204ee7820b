package conformancetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
	"github.com/mingru/scans/reference"
)

// TestMingruRange runs mingru_scan on b, forward and backward, with
// pre-activations far from the benchmark's, in about half the elements
// each (the rest standard normal; h0 given), in two ranges:
//
//   - beyond: where the linear form of the gates leaves the float range,
//     k of magnitude 50 to 100 (1 - z or z below 2^-70) and x of
//     magnitude 5e3 to 1.5e4 (g(x) = x + 0.5, or sigmoid(x) = 0);
//   - within: where every gate is still a normal float, k of magnitude
//     up to 80 and x in (-80, 1.5e4), so that the products of the decays
//     over a few steps are not;
//   - k beyond: k of magnitude 80 to 100 and x as in within, so that only
//     k leaves the linear form's range (e^k overflows past 88.7): a
//     kernel that bounds k too loosely computes 0 * Inf there.
//
// T = 13 runs the GPU kernels unchunked, T = 40 and 300 chunked. f32 is held
// to the float64 reference, the 16-bit types to the backend's reference
// on the same inputs, both with the op's gates; every output must be
// finite.
func TestMingruRange(t *testing.T, b scans.Backend) {
	t.Helper()
	_, seed := checkStart(t, b)
	ranges := []struct {
		name string
		k, x func(r *rand.Rand) float64
	}{
		{"beyond", func(r *rand.Rand) float64 { return sign(r) * (50 + 50*r.Float64()) },
			func(r *rand.Rand) float64 { return sign(r) * (5e3 + 1e4*r.Float64()) }},
		{"within", func(r *rand.Rand) float64 { return sign(r) * 80 * r.Float64() },
			withinX},
		{"k beyond", func(r *rand.Rand) float64 { return sign(r) * (80 + 20*r.Float64()) },
			withinX},
	}
	for ri, rg := range ranges {
		for _, T := range []int{13, 40, 300} {
			for _, dt := range scans.DTypes {
				mingruRange(t, b, seed, rg.name, rg.k, rg.x, uint64(ri*1000+T*10+int(dt)), T, dt)
			}
		}
	}
}

// withinX draws x in (-80, 1.5e4), where g(x) is a normal float: below
// zero or above it, with even odds.
func withinX(r *rand.Rand) float64 {
	if r.IntN(2) == 0 {
		return -80 * r.Float64()
	}
	return 1.5e4 * r.Float64()
}

// sign is -1 or 1, at random.
func sign(r *rand.Rand) float64 { return float64(2*r.IntN(2) - 1) }

// mingruRange is one row of TestMingruRange: about half the elements of
// k and x drawn by kv and xv.
func mingruRange(t *testing.T, b scans.Backend, seed uint64, name string, kv, xv func(*rand.Rand) float64,
	stream uint64, T int, dt scans.DType) {
	t.Helper()
	op := scans.OpMingruScan
	ref := reference.New()
	if dt != scans.F32 {
		ref = conformance.ReferenceFor(b)
	}
	d := scans.Dims{B: 3, T: T, N: 6, K: 1, V: 1}
	rng := rand.New(rand.NewPCG(seed, stream))
	in, err := bench.InputsInit(op, d, dt, bench.Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	k, x := in.Args[0], in.Args[1]
	for i := range k.Len() {
		if rng.IntN(2) == 0 {
			k.Set(i, float32(kv(rng)))
		}
		if rng.IntN(2) == 0 {
			x.Set(i, float32(xv(rng)))
		}
	}
	for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
		label := fmt.Sprintf("%s %s %v T=%d %s", op, dir, dt, T, name)
		want, got := againstRef(t, ref, b, op, dir, in, label)
		atol, rtol := conformance.Gate(op, dir, dt)
		if n := matchIEEE(t, label, want, got, nil, atol, rtol); n != 0 {
			t.Errorf("%s: %d outputs of the reference are not finite", label, n)
		}
	}
}

// TestMingruNegativeH0 gives one lane of mingru_scan a negative h0 entry
// and checks that exactly that lane is NaN: h at every step, and dk, dx
// at every step and dh0 in the backward. Every other element is finite.
func TestMingruNegativeH0(t *testing.T, b scans.Backend) {
	t.Helper()
	_, seed := checkStart(t, b)
	op := scans.OpMingruScan
	d := scans.Dims{B: 3, T: 70, N: 5, K: 1, V: 1}
	rng := rand.New(rand.NewPCG(seed, 0x4e48))
	in, err := bench.InputsInit(op, d, scans.F32, bench.Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	lb, lc := 1, rng.IntN(d.N)
	in.Args[2].Set(lb*d.N+lc, -0.25)
	inLane := func(i, perB int) bool { return i/perB == lb && i%d.N == lc }
	check := func(name string, v []float32, perB int) {
		for i, f := range v {
			if nan := math.IsNaN(float64(f)); nan != inLane(i, perB) {
				t.Errorf("%s element %d (batch %d, channel %d) = %v; want NaN in batch %d channel %d only",
					name, i, i/perB, i%d.N, f, lb, lc)
				return
			}
			if !inLane(i, perB) && math.IsInf(float64(f), 0) {
				t.Errorf("%s element %d = %v", name, i, f)
				return
			}
		}
	}
	out, err := bench.Run(b, op, scans.Forward, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("h", out[0].Float32s(), d.T*d.N)
	g, err := bench.Run(b, op, scans.Backward, in, out[0])
	if err != nil {
		t.Fatal(err)
	}
	check("dk", g[0].Float32s(), d.T*d.N)
	check("dx", g[1].Float32s(), d.T*d.N)
	check("dh0", g[2].Float32s(), d.N)
}
