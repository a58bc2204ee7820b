package vk

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/mingru/scans"
	"github.com/mingru/scans/internal/angles"
)

// hostBytes is a byte view of a host tensor's data (little-endian f32 or
// 16-bit words, the layout the kernels read).
func hostBytes(h *scans.Host) []byte {
	if f := h.Float32Data(); f != nil {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
	}
	u := h.Bits()
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(u))), 2*len(u))
}

// call is one operation in progress: its arguments as vk tensors and the
// outputs allocated so far (released again if the call fails).
type call struct {
	b       *Backend
	dev     *device
	op      scans.Op
	dir     scans.Direction
	dims    scans.Dims
	dt      scans.DType
	outs    []*Tensor // outputs this call allocated
	given   []*Tensor // the caller's outputs (scans.Call.Out), or nil
	next    int       // the next of given to hand out
	ins     []*Tensor // the arguments
	written []*Tensor // every output, made or given
	scratch []*buffer
	q       *Queue // where the kernels go; nil runs them now
}

// owns checks, before any shape check, that every non-nil argument is one
// of this backend's tensors, so that an argument on another device is
// named as such whatever the others are.
func (b *Backend) owns(op scans.Op, names []string, ts []scans.Tensor) error {
	for i, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		vt, ok := t.(*Tensor)
		if !ok {
			return &scans.ArgError{Op: op, Arg: names[i], Want: "a *vk.Tensor (use Upload)", Got: fmt.Sprintf("%T on %s", t, t.Location())}
		}
		if vt.owner != b {
			return &scans.ArgError{Op: op, Arg: names[i], Want: "a tensor of this vulkan backend", Got: "a tensor of another vulkan backend"}
		}
	}
	return nil
}

// runners maps each operation to the functions that run its forward and
// its backward on a begun call.
var runners = map[scans.Op][2]func(c *call, v []*Tensor) ([]scans.Tensor, error){
	scans.OpLinearScan:       {linearForward, linearBackward},
	scans.OpMatrixScan:       {affineForward, affineBackward},
	scans.OpMatrixAffineScan: {affineForward, affineBackward},
	scans.OpParallelScanLog:  {logForward, logBackward},
	scans.OpGivensScan:       {givensForward, givensBackward},
	scans.OpMingruScan:       {linearForward, mingruBackward},
}

// Run implements scans.Backend: it names any argument that is not one of
// this backend's tensors, checks the call, checks the envelope and the
// device (begin) and runs the operation's kernels.
func (b *Backend) Run(sc *scans.Call) (out []scans.Tensor, err error) {
	return b.run(sc, nil)
}

// run runs sc now (q nil) or enqueues it on q.
func (b *Backend) run(sc *scans.Call, q *Queue) (out []scans.Tensor, err error) {
	if sc == nil {
		return nil, errors.New("vulkan: Run: nil call")
	}
	defer recoverTo(sc.Op, &err)
	leave, err := b.life.Enter()
	if err != nil {
		return nil, fmt.Errorf("vulkan: %s: %w", sc.Op, err)
	}
	defer leave()
	spec := sc.Spec()
	if spec == nil {
		return nil, sc.Check()
	}
	names := spec.ArgNames(sc.Dir)
	if len(sc.Args) == len(names) {
		if err := b.owns(sc.Op, names, sc.Args); err != nil {
			return nil, err
		}
	}
	if len(sc.Out) == len(spec.Results(sc.Dir)) {
		outNames := make([]string, len(sc.Out))
		for i := range outNames {
			outNames[i] = sc.OutName(i)
		}
		if err := b.owns(sc.Op, outNames, sc.Out); err != nil {
			return nil, err
		}
	}
	if err := sc.Check(); err != nil {
		return nil, err
	}
	run, ok := runners[sc.Op]
	if !ok {
		return nil, fmt.Errorf("vulkan: %s: no kernels", sc.Op)
	}
	c, v, err := b.begin(sc.Op, sc.Dir, sc.Dims, names, sc.Args)
	if err != nil {
		return nil, err
	}
	if sc.Out != nil {
		c.given = make([]*Tensor, len(sc.Out))
		for i, t := range sc.Out {
			if scans.IsNil(t) {
				continue
			}
			vt := t.(*Tensor) // owns has checked it
			if vt.released.Load() {
				return nil, &scans.ArgError{Op: sc.Op, Arg: sc.OutName(i), Want: "a live tensor", Got: "a released tensor"}
			}
			c.given[i] = vt
		}
	}
	c.dir, c.ins, c.q = sc.Dir, v, q
	if sc.Dir == scans.Forward {
		return run[0](c, v)
	}
	return run[1](c, v)
}

// begin checks that every non-nil argument is a live tensor of this
// backend, that the shape is in the envelope and that the device is open.
// ts are checked by owns and scans.Check* before begin is called.
func (b *Backend) begin(op scans.Op, dir scans.Direction, d scans.Dims, names []string, ts []scans.Tensor) (*call, []*Tensor, error) {
	vts := make([]*Tensor, len(ts))
	var dt scans.DType
	for i, t := range ts {
		if scans.IsNil(t) {
			continue
		}
		vt := t.(*Tensor) // owns has checked it
		if vt.released.Load() {
			return nil, nil, &scans.ArgError{Op: op, Arg: names[i], Want: "a live tensor", Got: "a released tensor"}
		}
		vts[i] = vt
		dt = vt.dtype
	}
	if err := supports(op, d, dt); err != nil {
		return nil, nil, err
	}
	dev, err := b.device()
	if err != nil {
		return nil, nil, b.unavailable()
	}
	if err := deviceSupports(dev, op, d, dt); err != nil {
		return nil, nil, err
	}
	return &call{b: b, dev: dev, op: op, dims: d, dt: dt}, vts, nil
}

// output returns the next output: the caller's, when the call has Out
// (the runners ask for their outputs in Results order), else a new tensor.
func (c *call) output(shape ...int) (*Tensor, error) {
	if c.given != nil {
		for c.next < len(c.given) && c.given[c.next] == nil {
			c.next++
		}
		if c.next == len(c.given) {
			return nil, fmt.Errorf("vk: %s: more outputs asked for than given", c.op)
		}
		t := c.given[c.next]
		c.next++
		t.angles = angles.Any
		c.written = append(c.written, t)
		return t, nil
	}
	t, err := c.b.newTensor(c.dev, c.dt, shape)
	if err != nil {
		return nil, err
	}
	c.outs = append(c.outs, t)
	c.written = append(c.written, t)
	return t, nil
}

func (c *call) scratchF32(elems int64) (*buffer, error) {
	buf, err := c.dev.alloc(4 * elems)
	if err != nil {
		return nil, err
	}
	c.scratch = append(c.scratch, buf)
	return buf, nil
}

// in and out make operands of tensors; a nil tensor gives an empty operand
// (the device binds a placeholder).
func (c *call) in(t *Tensor, stride int) operand {
	if t == nil {
		return operand{}
	}
	return operand{buf: t.buf, stride: int64(stride), esize: int64(c.dt.Size())}
}

func (c *call) out(t *Tensor, stride int) operand {
	if t == nil {
		return operand{}
	}
	return operand{buf: t.buf, stride: int64(stride), esize: int64(c.dt.Size()), out: true, poison: poisonPattern(c.dt)}
}

// run executes the kernels and frees the scratch buffers; on failure it
// also frees the outputs and returns the error as a *scans.KernelError (or
// a *scans.ScanFallback when a single batch entry cannot be bound).
func (c *call) run(ks ...kernel) error {
	if c.q != nil {
		return c.enqueue(ks)
	}
	err := c.dev.run(ks, int64(c.dims.B), c.b.poison, &c.b.last)
	c.freeScratch()
	if err != nil {
		return c.failed(err)
	}
	return nil
}

// freeScratch returns the call's scratch buffers to the pool.
func (c *call) freeScratch() {
	for _, s := range c.scratch {
		c.dev.free(s)
	}
	c.scratch = nil
}

// failed releases the outputs of a call whose kernels could not run and
// returns err as the call's error: a *scans.ScanFallback as it is, with
// the operation, anything else as a *scans.KernelError.
func (c *call) failed(err error) error {
	c.fail()
	var fb *scans.ScanFallback
	if errors.As(err, &fb) {
		fb.Op = c.op
		return fb
	}
	return &scans.KernelError{Backend: "vulkan", Op: c.op, Err: err}
}

// fail releases the outputs of a failed call.
func (c *call) fail() {
	c.b.free(c.outs...)
	c.outs = nil
}

// allocErr turns a failed output allocation into the call's error.
func (c *call) allocErr(err error) error {
	c.freeScratch()
	c.fail()
	return &scans.KernelError{Backend: "vulkan", Op: c.op, Err: err}
}

// tensorOrNil keeps a nil *Tensor a nil interface.
func tensorOrNil(t *Tensor) scans.Tensor {
	if t == nil {
		return nil
	}
	return t
}

// tiledLayoutOf is the tiled kernels' layout rule: tiledLayout, or the
// backend's own (config.tiledLayout, a layout experiment's).
func (c *call) tiledLayoutOf(B, T, units, wgCap, steps, unitCh int) (tile, chunks int) {
	if f := c.b.cfg.tiledLayout; f != nil {
		return f(B, T, units, wgCap, steps, unitCh)
	}
	return tiledLayout(B, T, units, wgCap, steps, unitCh)
}

// alignWords says whether the 16-bit kernels (and the subgroup Givens
// kernels) may be compiled for whole words.
func (c *call) alignWords() bool { return !c.b.cfg.noAlignWords }

// elementwise is the kernel of the tiled layout (linear_scan,
// parallel_scan_log, matrix_scan): a tile of tile units per workgroup, a
// unit being what one invocation serves (a channel, two adjacent channels
// of a 16-bit type, or a 2x2 block; see shaders/chunks.glsl).
func (c *call) elementwise(dir scans.Direction) kernel {
	d := c.dims
	units, steps := elementwiseUnits(c.op, c.dt, d.N)
	tile, chunks := c.tiledLayoutOf(d.B, d.T, units, tiledWorkgroupCap(c.op, c.dt, c.dev.maxWorkgroup()), steps, unitChannels(c.op, c.dt))
	k := kernel{module: moduleName(c.op, dir, c.dt), T: uint32(d.T), N: uint32(d.N)}
	k.spec[specWG] = uint32(tile * chunks)
	k.spec[specK], k.spec[specV] = 1, 1
	k.spec[specChunks] = uint32(chunks)
	k.spec[specTile] = uint32(tile)
	k.groupsPerBatch = int64((units + tile - 1) / tile)
	k.wordAligned = c.alignWords() && wholeWords(c.op, c.dt, d.N)
	return k
}

// linearForward runs linear_scan's forward on the call's tensors v, and
// mingru_scan's, whose tensors bind alike: two (B,T,D) inputs, h0, h.
func linearForward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	out, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	k := c.elementwise(scans.Forward)
	td := d.T * d.N
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], td), c.in(v[1], td), c.in(v[2], d.N), c.out(out, td)
	if v[2] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{out}, nil
}

// linearBackward runs linear_scan's backward on the call's tensors v.
func linearBackward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	oa, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	ob, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	var o0 *Tensor
	if v[2] != nil {
		if o0, err = c.output(d.B, d.N); err != nil {
			return nil, c.allocErr(err)
		}
	}
	k := c.elementwise(scans.Backward)
	td := d.T * d.N
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], td), c.in(v[2], d.N), c.in(v[3], td), c.in(v[4], td)
	k.binds[4], k.binds[5], k.binds[6] = c.out(oa, td), c.out(ob, td), c.out(o0, d.N)
	if v[2] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{oa, ob, tensorOrNil(o0)}, nil
}

// logForward runs parallel_scan_log's forward on the call's tensors v.
func logForward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	out, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	k := c.elementwise(scans.Forward)
	td := d.T * d.N
	k.binds[0], k.binds[1], k.binds[2] = c.in(v[0], td), c.in(v[1], td+d.N), c.out(out, td)
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{out}, nil
}

// logBackward runs parallel_scan_log's backward on the call's tensors v.
func logBackward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	oc, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	ov, err := c.output(d.B, d.T+1, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	k := c.elementwise(scans.Backward)
	td := d.T * d.N
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], td), c.in(v[1], td+d.N), c.in(v[2], td), c.in(v[3], td)
	k.binds[4], k.binds[5] = c.out(oc, td), c.out(ov, td+d.N)
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{oc, ov}, nil
}

// mingruBackward runs mingru_scan's backward on the call's tensors v.
func mingruBackward(c *call, v []*Tensor) ([]scans.Tensor, error) {
	d := c.dims
	ok, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	ox, err := c.output(d.B, d.T, d.N)
	if err != nil {
		return nil, c.allocErr(err)
	}
	var o0 *Tensor
	if v[2] != nil {
		if o0, err = c.output(d.B, d.N); err != nil {
			return nil, c.allocErr(err)
		}
	}
	k := c.elementwise(scans.Backward)
	td := d.T * d.N
	k.binds[0], k.binds[1], k.binds[2], k.binds[3] = c.in(v[0], td), c.in(v[1], td), c.in(v[2], d.N), c.in(v[3], td)
	k.binds[4], k.binds[5], k.binds[6], k.binds[7] = c.in(v[4], td), c.out(ok, td), c.out(ox, td), c.out(o0, d.N)
	if v[2] != nil {
		k.flags = 1
	}
	if err := c.run(k); err != nil {
		return nil, err
	}
	return []scans.Tensor{ok, ox, tensorOrNil(o0)}, nil
}
