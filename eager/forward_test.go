package eager

import (
	"math"
	"testing"

	"github.com/mingru/scans"
)

// TestForward checks every operation through the Backend against the
// independent float64 recurrence of SPEC, on fresh benchmark-distributed
// inputs, for T in Ts, odd B and D/N, and block sizes inside and outside
// the GPU envelope. It also checks that the float32 kernel writes every
// output element and that the float64 kernel matches the reference to
// float64 accuracy.
func TestForward(t *testing.T) {
	be := New()
	for _, op := range scans.Ops {
		t.Run(string(op), func(t *testing.T) {
			r := newRand(t)
			for _, kv := range blockSizes(op) {
				for i, T := range Ts {
					B, N := 3, 7
					if op == scans.OpMatrixScan || op == scans.OpMatrixAffineScan || op == scans.OpGivensScan {
						N = 3
						if T >= 1000 {
							B = 1
							if testing.Short() && kv[0]*kv[1] > 16 {
								continue
							}
						}
					}
					c := newCase(r, op, dims(op, B, T, N, kv[0], kv[1]), i%2 == 0, benchDist)
					want := c.reference()
					atol, rtol, _, _ := c.gates()

					out, err := forward(be, op, c.tensors(t, scans.F32))
					if err != nil {
						t.Fatalf("%v: %v", c, err)
					}
					got := out.(*scans.Host).Float32Data()
					check(t, c.String(), got, want, atol, rtol)

					k32 := kernelForward(c, c.in)
					allWritten(t, c.String()+" f32 kernel", k32)
					for j := range k32 {
						if math.Float32bits(k32[j]) != math.Float32bits(got[j]) {
							t.Fatalf("%v: Backend element %d = %v, float32 kernel %v", c, j, got[j], k32[j])
						}
					}
					k64 := kernelForward(c, c.inputs64())
					allWritten(t, c.String()+" f64 kernel", k64)
					check(t, c.String()+" f64 kernel", k64, want, 1e-10*(1+maxAbs(want)), 0)
				}
			}
		})
	}
}

// TestLongMemory holds every operation to the float64 reference in the
// long-memory regime (decays 0.999 + 0.001u, log_coeffs near 0, A of
// spectral radius near 1) with the forward-error bound of a length-T
// recurrence, atol = 2 * T * 2^-24 * max|want|.
func TestLongMemory(t *testing.T) {
	be := New()
	T := 4096
	if testing.Short() {
		T = 1024
	}
	for _, op := range scans.Ops {
		t.Run(string(op), func(t *testing.T) {
			r := newRand(t)
			for _, kv := range blockSizes(op) {
				if op == scans.OpMatrixAffineScan && kv != [2]int{8, 8} && kv != [2]int{3, 5} {
					continue
				}
				if op == scans.OpGivensScan && kv[0] != 2 && kv[0] != 8 && kv[0] != 5 {
					continue
				}
				c := newCase(r, op, dims(op, 2, T, 3, kv[0], kv[1]), true, longMemory)
				want := c.reference()
				out, err := forward(be, op, c.tensors(t, scans.F32))
				if err != nil {
					t.Fatalf("%v: %v", c, err)
				}
				atol := 2 * float64(T) * math.Exp2(-24) * maxAbs(want)
				got := out.(*scans.Host).Float32Data()
				check(t, c.String(), got, want, atol, 0)
				worst := 0.0
				for i, w := range want {
					worst = math.Max(worst, math.Abs(float64(got[i])-w))
				}
				t.Logf("%v: max|want| %.3g, worst error %.3g = %.3g of the bound", c, maxAbs(want), worst, worst/atol)
			}
		})
	}
}
