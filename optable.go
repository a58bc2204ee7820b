package scans

import (
	"fmt"
	"strings"
)

// ArgSpec is one argument or result of an operation: its name as SPEC
// spells it, its dimensions ("B,T,D") and whether it may be nil.
type ArgSpec struct {
	Name     string
	Dims     string
	Optional bool
}

// OpSpec describes one operation: its forward inputs in argument order,
// its output, how its arguments are checked and which block sizes the GPU
// kernels serve. The backward takes the forward's inputs, its output and
// the output's gradient, and returns one gradient per input, named "d" and
// the input's name; the gradient of an absent optional input is nil.
type OpSpec struct {
	Op     Op
	Inputs []ArgSpec
	Output ArgSpec
	// Envelope is the rule CheckEnvelope applies, as SPEC states it.
	Envelope string

	check func(args []Tensor, bwd bool) (Dims, error)
	// What the methods below return, per direction (0 forward, 1
	// backward), worked out once: a call checks its arguments by them.
	args, results [2][]ArgSpec
	names, outs   [2][]string
}

// Args lists the arguments of a call in dir: the inputs, then for the
// backward the output and its gradient. The slice is the table's own:
// read it, do not change it.
func (s *OpSpec) Args(dir Direction) []ArgSpec { return s.args[dirIndex(dir)] }

// ArgNames lists the names of Args(dir) (the table's own slice).
func (s *OpSpec) ArgNames(dir Direction) []string { return s.names[dirIndex(dir)] }

// Results lists what a call in dir returns: the output, or one gradient
// per input (the table's own slice).
func (s *OpSpec) Results(dir Direction) []ArgSpec { return s.results[dirIndex(dir)] }

func dirIndex(dir Direction) int {
	if dir == Backward {
		return 1
	}
	return 0
}

// derive fills the per-direction lists of Args, ArgNames and Results, and
// the names errors give the results ("output h").
func (s *OpSpec) derive() {
	for i, dir := range []Direction{Forward, Backward} {
		a := append([]ArgSpec(nil), s.Inputs...)
		r := []ArgSpec{s.Output}
		if dir == Backward {
			a = append(a, s.Output, ArgSpec{Name: "d" + s.Output.Name, Dims: s.Output.Dims})
			r = make([]ArgSpec, len(s.Inputs))
			for j, in := range s.Inputs {
				r[j] = ArgSpec{Name: "d" + in.Name, Dims: in.Dims, Optional: in.Optional}
			}
		}
		s.args[i], s.results[i] = a[:len(a):len(a)], r[:len(r):len(r)]
		s.names[i], s.outs[i] = make([]string, len(a)), make([]string, len(r))
		for j, x := range a {
			s.names[i][j] = x.Name
		}
		for j, x := range r {
			s.outs[i][j] = "output " + x.Name
		}
	}
}

// InitArg is the index of the optional initial state among the inputs, or
// -1 when the operation has none.
func (s *OpSpec) InitArg() int {
	for i, a := range s.Inputs {
		if a.Optional {
			return i
		}
	}
	return -1
}

func specArgs(list string) []ArgSpec {
	var out []ArgSpec
	for _, f := range strings.Split(list, " ") {
		name, dims, _ := strings.Cut(f, ":")
		opt := strings.HasSuffix(name, "?")
		out = append(out, ArgSpec{Name: strings.TrimSuffix(name, "?"), Dims: dims, Optional: opt})
	}
	return out
}

func newSpec(op Op, inputs, output, envelope string, check func([]Tensor, bool) (Dims, error)) *OpSpec {
	s := &OpSpec{Op: op, Inputs: specArgs(inputs), Output: specArgs(output)[0], Envelope: envelope, check: check}
	s.derive()
	return s
}

// specs is the op table: adding an operation starts with its row here.
var specs = []*OpSpec{
	newSpec(OpLinearScan, "a:B,T,D b:B,T,D h0?:B,D", "h:B,T,D", "k = v = 1, any D",
		func(a []Tensor, bwd bool) (Dims, error) {
			return checkLinear(a[0], a[1], a[2], at(a, 3), at(a, 4), bwd)
		}),
	newSpec(OpMatrixScan, "A:B,T,N,2,2 b:B,T,N,2 h0?:B,N,2", "h:B,T,N,2", "k = 2, v = 1",
		func(a []Tensor, bwd bool) (Dims, error) {
			return checkMatrix(a[0], a[1], a[2], at(a, 3), at(a, 4), bwd)
		}),
	newSpec(OpMatrixAffineScan, "A:B,T,N,k,k X:B,T,N,k,v H0?:B,N,k,v", "H:B,T,N,k,v", "k, v in {1, 2, 4, 8, 16}",
		func(a []Tensor, bwd bool) (Dims, error) {
			return checkAffine(a[0], a[1], a[2], at(a, 3), at(a, 4), bwd)
		}),
	newSpec(OpParallelScanLog, "log_coeffs:B,T,D log_values:B,T+1,D", "h:B,T,D", "k = v = 1, any D",
		func(a []Tensor, bwd bool) (Dims, error) { return checkLog(a[0], a[1], at(a, 2), at(a, 3), bwd) }),
	newSpec(OpGivensScan, "theta:B,T,N,k-1 sigma:B,T,N,k x:B,T,N,k h0?:B,N,k", "h:B,T,N,k", "k in {2, 4, 8, 16}, v = 1",
		func(a []Tensor, bwd bool) (Dims, error) {
			return checkGivens(a[0], a[1], a[2], a[3], at(a, 4), at(a, 5), bwd)
		}),
	newSpec(OpMingruScan, "k:B,T,D x:B,T,D h0?:B,D", "h:B,T,D", "k = v = 1, any D",
		func(a []Tensor, bwd bool) (Dims, error) {
			return checkPair(OpMingruScan, "k", "x", a[0], a[1], a[2], at(a, 3), at(a, 4), bwd)
		}),
}

func at(a []Tensor, i int) Tensor {
	if i < len(a) {
		return a[i]
	}
	return nil
}

// Spec returns op's row of the op table, or nil for an unknown op.
func Spec(op Op) *OpSpec {
	for _, s := range specs {
		if s.Op == op {
			return s
		}
	}
	return nil
}

// Call is one call of an operation, described: the operation, the
// direction and the arguments in Spec(Op).Args(Dir) order (nil for an
// absent optional input). Check fills Dims and DType. A Backend's Run
// takes a Call, so that an operation is run through one entry point.
type Call struct {
	Op   Op
	Dir  Direction
	Args []Tensor
	// Out, when not nil, holds tensors the results are written into, in
	// Spec(Op).Results(Dir) order, so that a loop allocates its outputs
	// once. Each must be of the backend that runs the call, of the
	// result's shape and the call's element type, and must not be an
	// argument or another output: no operation runs in place. The entry of
	// a gradient whose optional input is absent is nil. Run then returns
	// these tensors.
	Out []Tensor

	// Dims and DType are the call's sizes and element type, set by Check.
	Dims  Dims
	DType DType

	checked bool
}

// NewCall describes a call of op in dir with args and checks it.
func NewCall(op Op, dir Direction, args ...Tensor) (*Call, error) {
	c := &Call{Op: op, Dir: dir, Args: args}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// Spec is the call's row of the op table (nil for an unknown op).
func (c *Call) Spec() *OpSpec { return Spec(c.Op) }

// ArgName is the name of argument i, for errors.
func (c *Call) ArgName(i int) string {
	if s := c.Spec(); s != nil {
		if n := s.ArgNames(c.Dir); i < len(n) {
			return n[i]
		}
	}
	return fmt.Sprintf("argument %d", i)
}

// Check validates the call against the op table: the number of
// arguments, every shape, one element type and one location. It sets Dims
// and DType, and runs once: a checked call is not checked again.
func (c *Call) Check() error {
	if c.checked {
		return nil
	}
	s := c.Spec()
	if s == nil {
		return fmt.Errorf("scans: unknown operation %q (want one of %v)", c.Op, Ops)
	}
	if c.Dir != Forward && c.Dir != Backward {
		return fmt.Errorf("scans: %s: unknown direction %q (want forward or backward)", c.Op, c.Dir)
	}
	if want := len(s.Args(c.Dir)); len(c.Args) != want {
		return fmt.Errorf("scans: %s %s takes %d arguments (%s), got %d",
			c.Op, c.Dir, want, strings.Join(s.ArgNames(c.Dir), ", "), len(c.Args))
	}
	d, err := s.check(c.Args, c.Dir == Backward)
	if err != nil {
		return err
	}
	for _, t := range c.Args {
		if !IsNil(t) {
			c.DType = t.DType()
			break
		}
	}
	if err := c.checkOut(s); err != nil {
		return err
	}
	c.Dims, c.checked = d, true
	return nil
}

// ResultShapes is the shape of each result of a call whose arguments have
// passed their shape checks, in Results order: nil for the gradient of an
// absent optional input.
func (c *Call) ResultShapes() [][]int {
	s := c.Spec()
	if s == nil {
		return nil
	}
	if c.Dir == Forward {
		for i, in := range s.Inputs {
			if in.Dims == s.Output.Dims && i < len(c.Args) && !IsNil(c.Args[i]) {
				return [][]int{c.Args[i].Shape()}
			}
		}
		return [][]int{nil}
	}
	out := make([][]int, len(s.Inputs))
	for i := range s.Inputs {
		if i < len(c.Args) && !IsNil(c.Args[i]) {
			out[i] = c.Args[i].Shape()
		}
	}
	return out
}

// OutName is how errors name result i of the call: "output h", "output da".
func (c *Call) OutName(i int) string {
	if s := c.Spec(); s != nil {
		if r := s.outs[dirIndex(c.Dir)]; i >= 0 && i < len(r) {
			return r[i]
		}
	}
	return fmt.Sprintf("output %d", i)
}

// checkOut checks the caller-given outputs, if any: their number, presence,
// shape, element type and location, and that none is an argument or
// another output.
func (c *Call) checkOut(s *OpSpec) error {
	if c.Out == nil {
		return nil
	}
	res := s.Results(c.Dir)
	if len(c.Out) != len(res) {
		return fmt.Errorf("scans: %s %s: Out holds %d tensors, want %d (%s)",
			c.Op, c.Dir, len(c.Out), len(res), strings.Join(resultNames(res), ", "))
	}
	loc := ""
	for _, t := range c.Args {
		if !IsNil(t) {
			loc = t.Location()
			break
		}
	}
	for i, shape := range c.ResultShapes() {
		o := c.Out[i]
		name := c.OutName(i)
		switch {
		case shape == nil && !IsNil(o):
			return &ArgError{Op: c.Op, Arg: name, Want: "nil (its input is absent)", Got: ShapeString(o.DType(), o.Shape())}
		case shape == nil:
			continue
		case IsNil(o):
			return &ArgError{Op: c.Op, Arg: name, Want: ShapeString(c.DType, shape), Got: "nil"}
		case o.DType() != c.DType || !equalShape(o.Shape(), shape):
			return &ArgError{Op: c.Op, Arg: name, Want: ShapeString(c.DType, shape), Got: ShapeString(o.DType(), o.Shape())}
		case o.Location() != loc:
			return &ArgError{Op: c.Op, Arg: name, Want: "a tensor on " + loc + " like the arguments",
				Got: ShapeString(o.DType(), o.Shape()) + " on " + o.Location()}
		}
		for j, a := range c.Args {
			if !IsNil(a) && sameTensor(a, o) {
				return &ArgError{Op: c.Op, Arg: name, Want: "a tensor that is not an argument (no operation runs in place)",
					Got: "argument " + c.ArgName(j)}
			}
		}
		for j := 0; j < i; j++ {
			if !IsNil(c.Out[j]) && sameTensor(c.Out[j], o) {
				return &ArgError{Op: c.Op, Arg: name, Want: "a tensor of its own", Got: "the tensor of " + c.OutName(j)}
			}
		}
	}
	return nil
}

// Aliaser is implemented by tensors that can share memory with another
// tensor without being the same value (a view, a wrapped buffer): Aliases
// reports whether the two overlap.
type Aliaser interface {
	Aliases(other Tensor) bool
}

func sameTensor(a, b Tensor) bool {
	if x, ok := a.(Aliaser); ok && x.Aliases(b) {
		return true
	}
	if x, ok := b.(Aliaser); ok && x.Aliases(a) {
		return true
	}
	return a == b
}

func resultNames(r []ArgSpec) []string {
	n := make([]string, len(r))
	for i, a := range r {
		n[i] = a.Name
	}
	return n
}

// Checked reports whether Check has passed.
func (c *Call) Checked() bool { return c.checked }

// WithArgs returns a copy of c with its arguments replaced by args: the
// same tensors elsewhere (moved to another backend, say). The copy is
// checked, without checking its shapes again, when c is and every
// argument has the shape, element type and presence of the one it
// replaces; otherwise it is unchecked. The copy has no Out: its results
// are new tensors where its arguments live.
func (c *Call) WithArgs(args []Tensor) *Call {
	n := &Call{Op: c.Op, Dir: c.Dir, Args: args, Dims: c.Dims, DType: c.DType}
	if !c.checked || len(args) != len(c.Args) {
		return n
	}
	for i, t := range args {
		o := c.Args[i]
		if IsNil(t) != IsNil(o) {
			return n
		}
		if !IsNil(t) && (t.DType() != o.DType() || !equalShape(t.Shape(), o.Shape())) {
			return n
		}
	}
	n.checked = true
	return n
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
