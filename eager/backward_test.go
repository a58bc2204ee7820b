package eager

import (
	"fmt"
	"math"
	"testing"

	"github.com/mingru/scans"
)

// TestBackwardFiniteDifferences checks each float64 backward kernel
// against central finite differences of loss = sum(w * out) with random
// weights w, for every element of every input (the initial state
// included), on small shapes. The relative error, max|fd - grad| /
// max|grad| per input, must be under 1e-6.
func TestBackwardFiniteDifferences(t *testing.T) {
	const eps, tol = 1e-5, 1e-6
	for _, op := range scans.Ops {
		t.Run(string(op), func(t *testing.T) {
			r := newRand(t)
			sizes := blockSizes(op)
			if op == scans.OpMatrixAffineScan {
				sizes = [][2]int{{1, 1}, {2, 2}, {3, 2}, {2, 3}}
			}
			if op == scans.OpGivensScan {
				sizes = [][2]int{{2, 1}, {3, 1}, {4, 1}, {5, 1}}
			}
			for _, kv := range sizes {
				for _, T := range []int{1, 2, 5} {
					for _, withH0 := range []bool{true, false} {
						c := newCase(r, op, dims(op, 2, T, 3, kv[0], kv[1]), withH0, benchDist)
						in := c.inputs64()
						h := kernelForward(c, in)
						w := f64(normal(r, len(h)))
						loss := func() float64 {
							var s float64
							for i, v := range kernelForward(c, in) {
								s += w[i] * v
							}
							return s
						}
						grads := kernelBackward(c, in, h, w)
						for i, x := range in {
							if x == nil {
								if grads[i] != nil {
									t.Errorf("%v: gradient of absent %s is not nil", c, names[op][i])
								}
								continue
							}
							fd := make([]float64, len(x))
							for j := range x {
								orig := x[j]
								x[j] = orig + eps
								up := loss()
								x[j] = orig - eps
								down := loss()
								x[j] = orig
								fd[j] = (up - down) / (2 * eps)
							}
							scale := maxAbs(grads[i])
							if scale == 0 { // e.g. dA at T = 1 without h0: the loss does not depend on it
								if m := maxAbs(fd); !(m < 1e-9) {
									t.Errorf("%v: d%s is 0 everywhere, finite differences reach %.3g", c, names[op][i], m)
								}
								continue
							}
							worst := 0.0
							for j := range fd {
								worst = math.Max(worst, math.Abs(fd[j]-grads[i][j]))
							}
							if !(worst/scale < tol) {
								t.Errorf("%v: d%s: relative error %.3g against finite differences (tolerance %g)%s",
									c, names[op][i], worst/scale, tol, mismatch(grads[i], fd, tol*scale, 0))
							}
						}
					}
				}
			}
		})
	}
}

// TestBackward checks the float32 Backend backward against the float64
// backward kernels within SPEC's gradient gates, on benchmark-distributed
// inputs and a random output gradient, and that the float32 kernels write
// every gradient element.
func TestBackward(t *testing.T) {
	be := New()
	for _, op := range scans.Ops {
		t.Run(string(op), func(t *testing.T) {
			r := newRand(t)
			for _, kv := range blockSizes(op) {
				for i, T := range []int{1, 2, 65, 1000} {
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
					c := newCase(r, op, dims(op, B, T, N, kv[0], kv[1]), i%2 == 1, benchDist)
					_, _, gatol, grtol := c.gates()
					dh := normal(r, scans.NumElements(c.outShape()))

					in := c.tensors(t, scans.F32)
					h, err := forward(be, op, in)
					if err != nil {
						t.Fatalf("%v: %v", c, err)
					}
					grads, err := backward(be, op, in, h, host(t, dh, c.outShape()...))
					if err != nil {
						t.Fatalf("%v: backward: %v", c, err)
					}

					in64 := c.inputs64()
					want := kernelBackward(c, in64, kernelForward(c, in64), f64(dh))
					k32 := kernelBackward(c, c.in, h.(*scans.Host).Float32Data(), dh)
					for j, g := range grads {
						what := fmt.Sprintf("%v: d%s", c, names[op][j])
						if want[j] == nil {
							if !scans.IsNil(g) {
								t.Errorf("%s: want nil for an absent input, got %v", what, g)
							}
							continue
						}
						check(t, what, data(t, g), want[j], gatol, grtol)
						allWritten(t, what+" f32 kernel", k32[j])
						check(t, what+" f32 kernel", k32[j], data(t, g), 0, 0)
					}
				}
			}
		})
	}
}
