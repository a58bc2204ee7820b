package eager

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mingru/scans"
)

// foreign is a tensor held by some other backend.
type foreign struct {
	dtype scans.DType
	shape []int
}

func (f *foreign) DType() scans.DType { return f.dtype }
func (f *foreign) Shape() []int       { return f.shape }
func (f *foreign) Location() string   { return "vulkan" }

// call runs op forward (bwd false) or backward on args: the forward inputs
// followed, for the backward, by h and dh.
func call(be *Backend, op scans.Op, bwd bool, args []scans.Tensor) error {
	n := len(names[op])
	if !bwd {
		_, err := forward(be, op, args[:n])
		return err
	}
	_, err := backward(be, op, args[:n], args[n], args[n+1])
	return err
}

// TestBadInput checks that every operation, forward and backward, rejects
// a mismatched shape, a mixed element type, a missing required input, a
// wrong rank and a tensor of another backend with a *scans.ArgError that
// names the argument.
func TestBadInput(t *testing.T) {
	be := New()
	r := newRand(t)
	for _, op := range scans.Ops {
		for _, bwd := range []bool{false, true} {
			c := newCase(r, op, dims(op, 2, 3, 5, 3, 2), true, benchDist)
			good := c.tensors(t, scans.F32)
			argNames := append([]string(nil), names[op]...)
			if bwd {
				out := host(t, normal(r, scans.NumElements(c.outShape())), c.outShape()...)
				good = append(good, out, out.Clone())
				if op == scans.OpMatrixAffineScan {
					argNames = append(argNames, "H", "dH")
				} else {
					argNames = append(argNames, "h", "dh")
				}
			}
			if err := call(be, op, bwd, good); err != nil {
				t.Fatalf("%s backward=%v: valid call: %v", op, bwd, err)
			}
			for i, name := range argNames {
				shape := good[i].Shape()
				n := scans.NumElements(shape)
				bigger := append(append([]int(nil), shape[:len(shape)-1]...), shape[len(shape)-1]+1)
				half, _ := scans.Convert(scans.F16, normal(r, n), shape...)
				flat := host(t, normal(r, n), append([]int{shape[0] * shape[1]}, shape[2:]...)...)
				bad := map[string]scans.Tensor{
					"mismatched shape": host(t, normal(r, scans.NumElements(bigger)), bigger...),
					"wrong rank":       flat,
					"foreign tensor":   &foreign{scans.F32, shape},
					"nil":              (*scans.Host)(nil),
					"nil interface":    nil,
				}
				bad["mixed element type"] = half
				for what, x := range bad {
					if strings.HasPrefix(what, "nil") && i == c.optional() {
						continue // absent optional input: valid
					}
					args := append([]scans.Tensor(nil), good...)
					args[i] = x
					err := call(be, op, bwd, args)
					var ae *scans.ArgError
					switch {
					case err == nil:
						t.Errorf("%s backward=%v: %s %s accepted", op, bwd, what, name)
					case !errors.As(err, &ae):
						t.Errorf("%s backward=%v: %s %s: error %T %q is not a *scans.ArgError", op, bwd, what, name, err, err)
					case ae.Arg != name && !(fixes(op, i) && what != "foreign tensor" && !strings.HasPrefix(what, "nil") && contains(argNames, ae.Arg)):
						// An argument that fixes the dims or the element
						// type (a, A, X, log_coeffs, sigma) makes the
						// others the mismatched ones.
						t.Errorf("%s backward=%v: %s %s: error names %q: %v", op, bwd, what, name, ae.Arg, err)
					case ae.Op != op:
						t.Errorf("%s backward=%v: %s %s: error names op %q", op, bwd, what, name, ae.Op)
					}
				}
			}
		}
	}
}

// TestNoPanicEscapes checks that a panic inside a kernel's worker pool
// (here from slices shorter than the dims, which a Backend never passes)
// reaches the calling goroutine and comes back from the Backend's guard as
// an error, and that the backend works afterwards.
func TestNoPanicEscapes(t *testing.T) {
	be := New()
	r := newRand(t)
	err := func() (err error) {
		defer guard(scans.OpLinearScan, &err)
		d := scans.Dims{B: 64, T: 64, N: 64, K: 1, V: 1}
		LinearForward(d, make([]float32, 10), make([]float32, 10), nil, make([]float32, 10))
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("panic in a worker: got error %v, want an internal error", err)
	}
	a := host(t, uniform(r, 6, 0.5, 1), 1, 2, 3)
	b := host(t, normal(r, 6), 1, 2, 3)
	if _, err := be.LinearScan(a, b, nil); err != nil {
		t.Errorf("valid call after a recovered panic: %v", err)
	}
}

// TestUploadDownload checks that host tensors are copied in and out, and
// that other backends' tensors are refused.
func TestUploadDownload(t *testing.T) {
	be := New()
	r := newRand(t)
	x := host(t, normal(r, 6), 2, 3)
	up, err := be.Upload(x)
	if err != nil {
		t.Fatal(err)
	}
	x.Float32Data()[0] = float32(math.NaN())
	down, err := be.Download(up)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(float64(down.At(0))) || down.String() != "f32(2,3)" {
		t.Errorf("Upload did not copy: %v %v", down, down.At(0))
	}
	if _, err := be.Download(&foreign{scans.F32, []int{2, 3}}); err == nil {
		t.Error("Download of a foreign tensor succeeded")
	}
	if _, err := be.Upload(nil); err == nil {
		t.Error("Upload(nil) succeeded")
	}
	if err := be.Release(up); err != nil {
		t.Errorf("Release: %v", err)
	}
	if s := be.Status(); !s.Available || s.Backend != "eager" || !strings.HasPrefix(s.Device, "Go ") {
		t.Errorf("Status = %+v", s)
	}
	if err := be.Supports(scans.OpGivensScan, scans.Dims{B: 1, T: 7, N: 1, K: 3, V: 1}, scans.BF16); err != nil {
		t.Errorf("Supports: %v", err)
	}
}

// TestSpecialValues puts a NaN or an Inf into one input element of one
// lane, runs every operation forward and backward, and checks that the
// lane's results turn non-finite while every other lane's results are bit
// for bit those of a clean run.
func TestSpecialValues(t *testing.T) {
	be := New()
	r := newRand(t)
	for _, op := range scans.Ops {
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
			name := fmt.Sprintf("%s %v", op, bad)
			c := newCase(r, op, dims(op, 3, 9, 5, 3, 2), true, benchDist)
			dh := host(t, normal(r, scans.NumElements(c.outShape())), c.outShape()...)
			run := func(in []scans.Tensor) []scans.Tensor {
				h, err := forward(be, op, in)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				g, err := backward(be, op, in, h, dh)
				if err != nil {
					t.Fatalf("%s: backward: %v", name, err)
				}
				return append([]scans.Tensor{h}, g...)
			}
			clean := run(c.tensors(t, scans.F32))
			// Poison element (b=1, t=4, n=2) of the first input (of x for
			// mingru_scan, whose h stays finite with k = +Inf: z = 1).
			bi, t0, n0 := 1, 4, 2
			in := c.tensors(t, scans.F32)
			p := 0
			if op == scans.OpMingruScan {
				p = 1
			}
			s := in[p].Shape()
			rest := scans.NumElements(s[3:])
			in[p].(*scans.Host).Float32Data()[((bi*s[1]+t0)*s[2]+n0)*rest] = bad
			dirty := run(in)
			for j := range clean {
				if scans.IsNil(clean[j]) {
					continue
				}
				what := "h"
				if j > 0 {
					what = "d" + names[op][j-1]
				}
				cv, dv := data(t, clean[j]), data(t, dirty[j])
				shape := clean[j].Shape()
				laneDim := 2 // (B,T,N,...)
				if len(shape) == 2 || (j > 0 && j-1 == c.optional()) {
					laneDim = 1 // (B,N,...)
				}
				inner := scans.NumElements(shape[laneDim+1:])
				hit := false
				for e := range cv {
					b, n := e/scans.NumElements(shape[1:]), e/inner%shape[laneDim]
					if b == bi && n == n0 {
						if math.IsNaN(dv[e]) || math.IsInf(dv[e], 0) {
							hit = true
						}
						continue
					}
					if math.Float64bits(cv[e]) != math.Float64bits(dv[e]) {
						t.Errorf("%s: %s element %d (lane b=%d n=%d) changed from %v to %v", name, what, e, b, n, cv[e], dv[e])
						break
					}
				}
				if j == 0 && !hit {
					t.Errorf("%s: the poisoned lane's %s stayed finite", name, what)
				}
			}
		}
	}
}

// fixes reports whether argument i of op sets the dims or element type the
// other arguments are checked against (scans.Check*).
func fixes(op scans.Op, i int) bool {
	switch op {
	case scans.OpMatrixAffineScan:
		return i <= 1 // A fixes B, T, N, k; X fixes v
	case scans.OpGivensScan:
		return i == 1 // sigma
	}
	return i == 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
