package eager

import (
	"fmt"
	"math"
	"testing"

	"github.com/mingru/scans"
)

// TestHalfTypes checks every operation on f16 and bf16 inputs: the output
// (and every gradient) is the float32 computation on the widened inputs,
// rounded to the type (bit for bit), and the output is within SPEC's gate
// plus one unit in the last place of the float64 reference on the same
// (rounded) inputs. The backward takes the rounded forward output as
// stored.
func TestHalfTypes(t *testing.T) {
	be := New()
	for _, dt := range []scans.DType{scans.F16, scans.BF16} {
		for _, op := range scans.Ops {
			t.Run(dt.String()+"/"+string(op), func(t *testing.T) {
				r := newRand(t)
				for _, kv := range blockSizes(op) {
					for i, T := range []int{1, 3, 64, 65} {
						c := newCase(r, op, dims(op, 3, T, 5, kv[0], kv[1]), i%2 == 0, benchDist)
						in := c.tensors(t, dt)
						// The inputs as the backend sees them: widened from dt.
						for j, x := range in {
							if x != nil {
								c.in[j] = x.(*scans.Host).Float32s()
							}
						}
						h, err := forward(be, op, in)
						if err != nil {
							t.Fatalf("%v: %v", c, err)
						}
						if h.DType() != dt {
							t.Fatalf("%v: output type %v, want %v", c, h.DType(), dt)
						}
						sameBits(t, c.String()+" h", h.(*scans.Host), kernelForward(c, c.in))
						atol, rtol, _, _ := c.gates()
						check(t, c.String()+" h", data(t, h), c.reference(), atol, rtol+dt.Epsilon())

						dh, err := scans.Convert(dt, normal(r, scans.NumElements(c.outShape())), c.outShape()...)
						if err != nil {
							t.Fatal(err)
						}
						grads, err := backward(be, op, in, h, dh)
						if err != nil {
							t.Fatalf("%v: backward: %v", c, err)
						}
						want := kernelBackward(c, c.in, h.(*scans.Host).Float32s(), dh.Float32s())
						for j, g := range grads {
							if want[j] == nil {
								if !scans.IsNil(g) {
									t.Errorf("%v: gradient of absent %s is not nil", c, names[op][j])
								}
								continue
							}
							if g.DType() != dt {
								t.Fatalf("%v: d%s type %v, want %v", c, names[op][j], g.DType(), dt)
							}
							sameBits(t, fmt.Sprintf("%v d%s", c, names[op][j]), g.(*scans.Host), want[j])
						}
					}
				}
			})
		}
	}
}

// sameBits fails t unless got's 16-bit patterns are want rounded to got's
// type (NaN matches any NaN).
func sameBits(t testing.TB, what string, got *scans.Host, want []float32) {
	t.Helper()
	bits := got.Bits()
	if len(bits) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(bits), len(want))
	}
	for i, w := range want {
		var wb uint16
		if got.DType() == scans.F16 {
			wb = scans.F16FromFloat32(w)
		} else {
			wb = scans.BF16FromFloat32(w)
		}
		if bits[i] != wb && !(math.IsNaN(float64(w)) && math.IsNaN(float64(got.At(i)))) {
			t.Errorf("%s: element %d is %#04x (%g), want %#04x (%g rounded)", what, i, bits[i], got.At(i), wb, w)
			return
		}
	}
}
