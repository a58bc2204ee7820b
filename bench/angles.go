package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mingru/scans"
)

// TestGivensAngles runs givens_scan with angles far outside the
// benchmark's (-pi, pi): uniform in (-A, A) for A = 8, 100 and 3000 (an
// f16 angle is at most 65504), every element type, k = 4 and 8, forward
// and backward, against eager under the usual gates. Trained angles are
// not held to one turn. It is the check that fails on a kernel whose sine
// and cosine lose accuracy as |theta| grows: a special function unit that
// scales its argument to turns in f32 loses about |theta| 2^-24 of the
// angle, 2e-4 at 3000, twenty times the f32 gate. The shapes have few
// lanes (N = 4), which a GPU's plan cuts into chunks of T; many adds
// N = 200 at k = 8, enough lanes that a large GPU walks all of T per
// lane.
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
			for ai, amax := range []float64{8, 100, 3000} {
				rng := rand.New(rand.NewPCG(seed, uint64(int(dt)*100+di*10+ai)))
				in, err := InputsInit(op, d, dt, Typical, true, rng)
				if err != nil {
					t.Fatal(err)
				}
				theta := in.Args[0]
				for i := 0; i < theta.Len(); i++ {
					theta.Set(i, float32((2*rng.Float64()-1)*amax))
				}
				fwd, err := Run(ref, op, scans.Forward, in, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
					want, h := fwd, (*scans.Host)(nil)
					if dir == scans.Backward {
						h = fwd[0]
						if want, err = Run(ref, op, dir, in, h); err != nil {
							t.Fatal(err)
						}
					}
					got, err := Run(b, op, dir, in, h)
					if err != nil {
						t.Fatalf("%s %s %v k=%d N=%d: %v", op, dir, dt, d.K, d.N, err)
					}
					atol, rtol := Gate(op, dir, dt)
					matchIEEE(t, fmt.Sprintf("%s %s %v k=%d N=%d angles in (-%g, %g)", op, dir, dt, d.K, d.N, amax, amax), want, got, atol, rtol)
				}
			}
		}
	}
}
