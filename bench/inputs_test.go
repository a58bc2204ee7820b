package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mingru/scans"
)

func TestInputs(t *testing.T) {
	rng := newRNG(t)
	for _, op := range scans.Ops {
		for _, dt := range scans.DTypes {
			for _, r := range []Regime{Typical, LongMemory} {
				d := scans.Dims{B: 2, T: 9, N: 3, K: 4, V: 2}
				in, err := Inputs(op, d, dt, r, rng)
				if err != nil {
					t.Fatal(err)
				}
				shapes, out, _ := ArgShapes(op, in.Dims)
				for i, a := range in.Args {
					if a == nil {
						if i != initIndex(op) {
							t.Errorf("%s: input %s missing", op, ArgNames(op)[i])
						}
						continue
					}
					if a.DType() != dt || scans.ShapeString(dt, a.Shape()) != scans.ShapeString(dt, shapes[i]) {
						t.Errorf("%s: %s is %v, want %v", op, ArgNames(op)[i], a, scans.ShapeString(dt, shapes[i]))
					}
					name := ArgNames(op)[i]
					for j, v := range a.Float64s() {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%s %s[%d] = %g", op, name, j, v)
						}
						if v == 0 && name != "A" {
							t.Fatalf("%s %s[%d] is zero", op, name, j)
						}
						switch {
						case name == "a" || name == "sigma":
							lo := 0.5
							if r == LongMemory {
								lo = 0.998 // 0.999 rounded down to a 16-bit type
							}
							if v < lo || v > 1 {
								t.Fatalf("%s %v %s: %s[%d] = %g, want in (%g, 1)", op, dt, r, name, j, v, lo)
							}
						case name == "log_coeffs" || name == "log_values":
							if v >= 0 {
								t.Fatalf("%s %s[%d] = %g, want < 0", op, name, j, v)
							}
						case name == "theta":
							if math.Abs(v) > math.Pi+0.01 {
								t.Fatalf("theta[%d] = %g", j, v)
							}
						}
					}
				}
				if in.Grad == nil || scans.ShapeString(dt, in.Grad.Shape()) != scans.ShapeString(dt, out) {
					t.Errorf("%s: gradient %v, want shape %v", op, in.Grad, out)
				}
			}
		}
	}
	// The transitions of matrix_affine_scan are 0.9 times an orthogonal
	// matrix: each column has norm 0.9.
	in, err := InputsInit(scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 3, N: 2, K: 8, V: 1}, scans.F32, Typical, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	A := in.Args[0].Float64s()
	for blk := 0; blk < 6; blk++ {
		for j := 0; j < 8; j++ {
			s := 0.0
			for i := 0; i < 8; i++ {
				v := A[blk*64+i*8+j]
				s += v * v
			}
			if math.Abs(math.Sqrt(s)-0.9) > 1e-6 {
				t.Errorf("block %d column %d has norm %g, want 0.9", blk, j, math.Sqrt(s))
			}
		}
	}
	// Both presences of the initial state are drawn.
	seen := map[bool]bool{}
	for i := 0; i < 64; i++ {
		in, err := Inputs(scans.OpLinearScan, scans.Dims{B: 1, T: 1, N: 1}, scans.F32, Typical, rng)
		if err != nil {
			t.Fatal(err)
		}
		seen[in.Init()] = true
	}
	if !seen[true] || !seen[false] {
		t.Errorf("Inputs drew the initial state present=%v absent=%v in 64 draws", seen[true], seen[false])
	}
}

// newRNG returns a generator seeded from the clock, logging its seed.
func newRNG(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x5eed))
}
