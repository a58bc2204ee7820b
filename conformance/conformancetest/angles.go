package conformancetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance"
)

// TestGivensAngles runs givens_scan with angles far outside the
// benchmark's (-pi, pi), every element type, k = 4 and 8, forward and
// backward, against eager under the usual gates (angleSets): uniform in
// (-A, A) for A = 8, 100 and 3000 (an f16 angle is at most 65504); and
// angles within pi but one in 2000 uniform in (-60000, 60000), or (f32
// and bf16 only) in (-400000, 400000), or of any magnitude from 10^5 to
// 10^38 (its logarithm uniform). Trained angles are not held to one turn.
// It is the check that fails on a kernel whose sine and cosine lose
// accuracy as |theta| grows: a special function unit that scales its
// argument to turns in f32 loses about |theta| 2^-24 of the angle, 2e-4
// at 3000, twenty times the f32 gate. The sparse sets are for kernels
// that choose a path for a run of steps by its angles (skip the reduction
// when all lie within pi; a fast sine and cosine for angles up to about
// 10^5, a slower one beyond): most runs take the fast path, a few must
// not; the largest angles are for the reductions of huge angles. The
// shapes have few lanes (N = 4), which a GPU's plan cuts into chunks of
// T; many adds N = 200 at k = 8, enough lanes that a large GPU walks all
// of T per lane.
func TestGivensAngles(t *testing.T, b scans.Backend, many bool) {
	t.Helper()
	ref, seed := checkStart(t, b)
	op := scans.OpGivensScan
	for _, dt := range []scans.DType{scans.F32, scans.F16, scans.BF16} {
		dims := []scans.Dims{{B: 3, T: 300, N: 4, K: 4, V: 1}, {B: 3, T: 300, N: 4, K: 8, V: 1}}
		if many {
			dims = append(dims, scans.Dims{B: 3, T: 300, N: 200, K: 8, V: 1})
		}
		for di, d := range dims {
			for ai, set := range angleSets {
				if dt == scans.F16 && set.noF16 {
					continue
				}
				rng := rand.New(rand.NewPCG(seed, uint64(int(dt)*100+di*10+ai)))
				in, err := bench.InputsInit(op, d, dt, bench.Typical, true, rng)
				if err != nil {
					t.Fatal(err)
				}
				theta := in.Args[0]
				for i := 0; i < theta.Len(); i++ {
					theta.Set(i, float32(set.angle(rng)))
				}
				fwd, err := bench.Run(ref, op, scans.Forward, in, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
					want, h := fwd, (*scans.Host)(nil)
					if dir == scans.Backward {
						h = fwd[0]
						if want, err = bench.Run(ref, op, dir, in, h); err != nil {
							t.Fatal(err)
						}
					}
					got, err := bench.Run(b, op, dir, in, h)
					if err != nil {
						t.Fatalf("%s %s %v k=%d N=%d: %v", op, dir, dt, d.K, d.N, err)
					}
					atol, rtol := conformance.Gate(op, dir, dt)
					matchIEEE(t, fmt.Sprintf("%s %s %v k=%d N=%d angles %s", op, dir, dt, d.K, d.N, set.name), want, got, nil, atol, rtol)
				}
			}
		}
	}
}

// angleSets are TestGivensAngles' distributions of angles; noF16 marks a
// set whose angles an f16 cannot hold (they would round to infinity).
var angleSets = []struct {
	name  string
	angle func(*rand.Rand) float64
	noF16 bool
}{
	{"in (-8, 8)", func(r *rand.Rand) float64 { return uniform(r, 8) }, false},
	{"in (-100, 100)", func(r *rand.Rand) float64 { return uniform(r, 100) }, false},
	{"in (-3000, 3000)", func(r *rand.Rand) float64 { return uniform(r, 3000) }, false},
	{"in (-pi, pi), one in 2000 in (-60000, 60000)", func(r *rand.Rand) float64 {
		if r.IntN(2000) == 0 {
			return uniform(r, 60000)
		}
		return uniform(r, math.Pi)
	}, false},
	{"in (-pi, pi), one in 2000 in (-400000, 400000)", func(r *rand.Rand) float64 {
		if r.IntN(2000) == 0 {
			return uniform(r, 400000)
		}
		return uniform(r, math.Pi)
	}, true},
	{"in (-pi, pi), one in 2000 of magnitude 1e5 to 1e38", func(r *rand.Rand) float64 {
		if r.IntN(2000) == 0 {
			return math.Copysign(math.Pow(10, 5+33*r.Float64()), uniform(r, 1))
		}
		return uniform(r, math.Pi)
	}, true},
}

// uniform is uniform in (-a, a).
func uniform(r *rand.Rand, a float64) float64 { return (2*r.Float64() - 1) * a }
