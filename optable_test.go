package scans

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// sizes gives each dimension name of the op table a size.
func sizes(d Dims) map[string]int {
	return map[string]int{"B": d.B, "T": d.T, "D": d.N, "N": d.N, "k": d.K, "v": d.V, "2": 2,
		"T+1": d.T + 1, "k-1": d.K - 1}
}

// tensorFor makes a host tensor of random values for an ArgSpec's dims.
func tensorFor(t *testing.T, rng *rand.Rand, a ArgSpec, d Dims, dt DType) *Host {
	t.Helper()
	var shape []int
	for _, n := range strings.Split(a.Dims, ",") {
		s, ok := sizes(d)[n]
		if !ok {
			t.Fatalf("%s: unknown dimension %q", a.Name, n)
		}
		shape = append(shape, s)
	}
	vals := make([]float32, NumElements(shape))
	for i := range vals {
		vals[i] = rng.Float32()*2 - 1
	}
	h, err := Convert(dt, vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func dimsFor(op Op, rng *rand.Rand) Dims {
	d := Dims{B: 1 + rng.IntN(3), T: 1 + rng.IntN(5), N: 1 + rng.IntN(4), K: 1, V: 1}
	switch op {
	case OpMatrixScan:
		d.K = 2
	case OpMatrixAffineScan:
		d.K, d.V = 1+rng.IntN(4), 1+rng.IntN(4)
	case OpGivensScan:
		d.K = 2 + rng.IntN(4)
	}
	return d
}

// Every operation has a row; a call built from the row's dims checks and
// yields those dims; dropping a required argument, giving a wrong shape
// or a wrong count fails naming the argument.
func TestOpTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for _, op := range Ops {
		spec := Spec(op)
		if spec == nil {
			t.Fatalf("%s: no row in the op table", op)
		}
		for _, dir := range []Direction{Forward, Backward} {
			d := dimsFor(op, rng)
			dt := []DType{F32, F16, BF16}[rng.IntN(3)]
			var args []Tensor
			for _, a := range spec.Args(dir) {
				args = append(args, tensorFor(t, rng, a, d, dt))
			}
			c, err := NewCall(op, dir, args...)
			if err != nil {
				t.Fatalf("%s %s %v: %v", op, dir, d, err)
			}
			if c.Dims != d || c.DType != dt || !c.Checked() {
				t.Errorf("%s %s: dims %v %v checked %v; want %v %v true", op, dir, c.Dims, c.DType, c.Checked(), d, dt)
			}
			if got, want := len(spec.Results(dir)), map[Direction]int{Forward: 1, Backward: len(spec.Inputs)}[dir]; got != want {
				t.Errorf("%s %s: %d results, want %d", op, dir, got, want)
			}
			for i, a := range spec.Args(dir) {
				cut := append([]Tensor(nil), args...)
				cut[i] = nil
				_, err := NewCall(op, dir, cut...)
				if a.Optional {
					if err != nil {
						t.Errorf("%s %s without optional %s: %v", op, dir, a.Name, err)
					}
					continue
				}
				var ae *ArgError
				if !errors.As(err, &ae) || ae.Arg != a.Name {
					t.Errorf("%s %s without %s: got %v, want an ArgError naming it", op, dir, a.Name, err)
				}
				bad := append([]Tensor(nil), args...)
				bad[i] = tensorFor(t, rng, ArgSpec{Name: a.Name, Dims: "B,T,N,N,N,N"}, d, dt) // no argument has rank 6
				if _, err := NewCall(op, dir, bad...); !errors.As(err, &ae) || ae.Arg != a.Name {
					t.Errorf("%s %s with a wrong %s: got %v, want an ArgError naming it", op, dir, a.Name, err)
				}
			}
			if _, err := NewCall(op, dir, args[:len(args)-1]...); err == nil || !strings.Contains(err.Error(), "arguments") {
				t.Errorf("%s %s with one argument short: %v", op, dir, err)
			}
		}
	}
	if _, err := NewCall("no_such_scan", Forward); err == nil {
		t.Error("an unknown operation checked")
	}
}

// WithArgs keeps a call checked only for arguments of the same shapes.
func TestCallWithArgs(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	d := dimsFor(OpLinearScan, rng)
	spec := Spec(OpLinearScan)
	var args []Tensor
	for _, a := range spec.Inputs {
		args = append(args, tensorFor(t, rng, a, d, F32))
	}
	c, err := NewCall(OpLinearScan, Forward, args...)
	if err != nil {
		t.Fatal(err)
	}
	same := []Tensor{args[0].(*Host).Clone(), args[1].(*Host).Clone(), args[2].(*Host).Clone()}
	if n := c.WithArgs(same); !n.Checked() || n.Dims != c.Dims {
		t.Errorf("same shapes: checked %v dims %v", n.Checked(), n.Dims)
	}
	other := []Tensor{args[0], tensorFor(t, rng, spec.Inputs[1], Dims{B: d.B, T: d.T + 1, N: d.N}, F32), args[2]}
	if n := c.WithArgs(other); n.Checked() {
		t.Error("a changed shape kept the call checked")
	} else if err := n.Check(); err == nil {
		t.Error("a changed shape passed the check")
	}
	if n := c.WithArgs([]Tensor{args[0], args[1], nil}); n.Checked() {
		t.Error("a dropped argument kept the call checked")
	}
}

// Out is checked: its length, each output's presence, shape, element type
// and location, and that none is an argument, another output, or a host
// tensor sharing an argument's memory; the check names the output.
func TestCallOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for _, op := range Ops {
		spec := Spec(op)
		for _, dir := range []Direction{Forward, Backward} {
			d := dimsFor(op, rng)
			dt := []DType{F32, F16, BF16}[rng.IntN(3)]
			var args []Tensor
			for _, a := range spec.Args(dir) {
				args = append(args, tensorFor(t, rng, a, d, dt))
			}
			probe, err := NewCall(op, dir, args...)
			if err != nil {
				t.Fatal(err)
			}
			shapes := probe.ResultShapes()
			res := spec.Results(dir)
			if len(shapes) != len(res) {
				t.Fatalf("%s %s: %d result shapes, want %d", op, dir, len(shapes), len(res))
			}
			good := func() []Tensor {
				out := make([]Tensor, len(shapes))
				for i, s := range shapes {
					if s == nil {
						t.Fatalf("%s %s: result %s has no shape with every input given", op, dir, res[i].Name)
					}
					h, _ := NewHost(dt, s...)
					out[i] = h
				}
				return out
			}
			if _, err := (&Call{Op: op, Dir: dir, Args: args, Out: good()}).checkAll(); err != nil {
				t.Fatalf("%s %s with good outputs: %v", op, dir, err)
			}
			named := func(what string, out []Tensor, i int) {
				t.Helper()
				_, err := (&Call{Op: op, Dir: dir, Args: args, Out: out}).checkAll()
				var ae *ArgError
				if !errors.As(err, &ae) || ae.Arg != "output "+res[i].Name {
					t.Errorf("%s %s, %s: got %v, want an ArgError naming output %s", op, dir, what, err, res[i].Name)
				}
			}
			i := rng.IntN(len(shapes))
			out := good()
			out[i] = nil
			named("a nil output", out, i)
			out = good()
			wrong := append(append([]int(nil), shapes[i]...), 2)
			out[i], _ = NewHost(dt, wrong...)
			named("a wrong shape", out, i)
			out = good()
			other := F32
			if dt == F32 {
				other = BF16
			}
			out[i], _ = NewHost(other, shapes[i]...)
			named("a wrong type", out, i)
			for j, a := range args {
				if equalShape(a.Shape(), shapes[i]) {
					out = good()
					out[i] = args[j]
					named("an argument as output", out, i)
					h := args[j].(*Host)
					view := &Host{dtype: h.dtype, shape: h.shape, f32: h.f32, u16: h.u16}
					out[i] = view
					named("a host tensor sharing an argument's memory", out, i)
					break
				}
			}
			if len(shapes) > 1 {
				out = good()
				for j := range shapes {
					if j != i && equalShape(shapes[j], shapes[i]) {
						out[max(i, j)] = out[min(i, j)]
						named("one tensor as two outputs", out, max(i, j))
						break
					}
				}
			}
			if _, err := (&Call{Op: op, Dir: dir, Args: args, Out: good()[:len(shapes)-1]}).checkAll(); err == nil {
				t.Errorf("%s %s: Out one short passed", op, dir)
			}
			if init := spec.InitArg(); dir == Backward && init >= 0 {
				cut := append([]Tensor(nil), args...)
				cut[init] = nil
				out := good()
				c := &Call{Op: op, Dir: dir, Args: cut, Out: out}
				var ae *ArgError
				if _, err := c.checkAll(); !errors.As(err, &ae) || ae.Arg != "output "+res[init].Name {
					t.Errorf("%s %s: an output for the absent %s's gradient: %v", op, dir, spec.Inputs[init].Name, err)
				}
				out[init] = nil
				if _, err := (&Call{Op: op, Dir: dir, Args: cut, Out: out}).checkAll(); err != nil {
					t.Errorf("%s %s: nil output for the absent %s's gradient: %v", op, dir, spec.Inputs[init].Name, err)
				}
			}
		}
	}
}

// checkAll checks c and returns it.
func (c *Call) checkAll() (*Call, error) { return c, c.Check() }
