//go:build cgo

package vk

// Planning an operation's dispatches, recording them into a context's
// command buffer (with the barriers between them) and running them; and
// keeping a synchronous call's recording for the next call that repeats it.

import (
	"fmt"
	"hash/maphash"
	"strings"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

// sliceSize is the number of batch entries whose bindings all fit in the
// bindable range at once.
func (d *device) sliceSize(ks []kernel, B int64) (int64, error) {
	bs := B
	for _, k := range ks {
		for _, o := range k.binds {
			if o.buf == nil {
				continue
			}
			per := o.stride * o.esize
			room := d.maxRange - d.align - 4
			if per > room {
				return 0, &scans.ScanFallback{Backend: "vulkan", Reason: fmt.Sprintf(
					"one batch entry of a tensor needs %d bytes, more than the device can bind (maxStorageBufferRange %d)", per, d.maxRange)}
			}
			if n := room / per; n < bs {
				bs = n
			}
		}
	}
	return bs, nil
}

// dispatchRec is one recorded dispatch.
type dispatchRec struct {
	pipe   vk.Pipeline
	push   [4 + maxBindings]uint32
	infos  [maxBindings]bufferBinding
	gx, gy uint32
}

// batchOp is one operation made ready to record: its dispatches over the
// slices of the batch, the outputs to poison first (tests), the kernels
// whose guards to check and the scratch buffers to free once it has run.
type batchOp struct {
	op      scans.Op // with dir, named in errors (a synchronous call's: empty)
	dir     scans.Direction
	recs    []dispatchRec
	fills   []operand
	ks      []kernel
	scratch []*buffer
}

// plan makes the dispatch records of every kernel over slices of the
// batch (building their pipelines), with the outputs to poison first when
// poison is set.
func (d *device) plan(ks []kernel, B int64, poison bool) (*batchOp, error) {
	bs, err := d.sliceSize(ks, B)
	if err != nil {
		return nil, err
	}
	bs = evenSlices(B, bs)
	op := &batchOp{ks: ks}
	for b0 := int64(0); b0 < B; b0 += bs {
		n := bs
		if b0+n > B {
			n = B - b0
		}
		for _, k := range ks {
			var r dispatchRec
			r.push[0], r.push[1], r.push[2], r.push[3] = uint32(n), k.T, k.N, k.flags
			even := true
			for i, o := range k.binds {
				if o.buf == nil {
					r.infos[i] = bufferBinding{buf: d.placeholder.buf, offset: 0, rng: uint64(d.placeholder.size)}
					continue
				}
				start := b0 * o.stride * o.esize
				end := (b0 + n) * o.stride * o.esize
				base := start / d.align * d.align
				rng := (end - base + 3) &^ 3
				if base+rng > o.buf.size {
					rng = o.buf.size - base
				}
				r.infos[i] = bufferBinding{buf: o.buf.buf, offset: uint64(o.buf.offset + base), rng: uint64(rng)}
				r.push[4+i] = uint32((start - base) / o.esize)
				even = even && r.push[4+i]%2 == 0
			}
			spec := k.spec
			if k.wordAligned && even {
				spec[specAligned] = 1
			}
			if strings.HasSuffix(k.module, "_f16") {
				spec[specHWF16] = d.hwF16
			}
			p, err := d.pipeline(k.module, spec)
			if err != nil {
				return nil, err
			}
			r.pipe = p
			g := k.groups(n)
			gx := int64(d.maxGroups[0])
			if g < gx {
				gx = g
			}
			if gx < 1 {
				gx = 1
			}
			gy := (g + gx - 1) / gx
			if gy > int64(d.maxGroups[1]) {
				return nil, &scans.ScanFallback{Backend: "vulkan", Reason: fmt.Sprintf("%d workgroups exceed the device's dispatch limits", g)}
			}
			r.gx, r.gy = uint32(gx), uint32(gy)
			op.recs = append(op.recs, r)
		}
	}
	if poison {
		for _, k := range ks {
			for _, o := range k.binds {
				if o.buf != nil && o.out {
					op.fills = append(op.fills, o)
				}
			}
		}
	}
	return op, nil
}

// run plans the kernels and executes them at once: the synchronous path.
// The time between the timestamps around the dispatches goes to w.
func (d *device) run(ks []kernel, B int64, poison bool, w *lastTime) error {
	op, err := d.plan(ks, B, poison)
	if err != nil {
		return err
	}
	return d.execute([]*batchOp{op}, w)
}

// execute records the operations into one command buffer, in order (see
// record for the barriers between them), submits it once and
// waits for its fence. The timestamps written before the first dispatch
// and after the last are left for w to read (see lastTime).
func (d *device) execute(ops []*batchOp, w *lastTime) error {
	gen := d.bufGen.Load()
	var one *batchOp
	var key uint64
	if len(ops) == 1 {
		key = ops[0].digest()
		if !d.noReplay {
			one = ops[0]
		}
	}
	c, replay, err := d.ctxFor(one, key, gen)
	if err != nil {
		return err
	}
	defer d.putCtx(c)
	n, err := d.ready(c, ops, replay, key, gen)
	if err != nil {
		return err
	}
	d.lastDispatches.Store(int64(n))
	if err := d.submit(c); err != nil {
		return err
	}
	if err := d.checkOpGuards(ops); err != nil {
		return err
	}
	if !c.hasQry || n == 0 {
		w.set(0, false)
		return nil
	}
	// Before putCtx: whoever takes c next reads them first (settle).
	d.leave(c, w)
	return nil
}

// ready makes c's command buffer hold ops, ready to submit. A
// synchronous call in a loop plans the same dispatches on the same
// buffers each time (outputs come back from the pool or are the
// caller's). When ctxFor found a context whose buffer holds exactly
// those, and no buffer has been destroyed since it was recorded (replay),
// the buffer is submitted again as it is, with its descriptor sets.
// Otherwise ready records ops anew, and keeps a single operation's
// recording with its digest key and the buffer generation gen read
// before it.
func (d *device) ready(c *execCtx, ops []*batchOp, replay bool, key, gen uint64) (int, error) {
	if replay {
		d.lastBarriers.Store(c.held.barriers)
		d.replays.Add(1)
		return len(c.held.recs), nil
	}
	n, err := d.record(c, ops, false)
	if err != nil || len(ops) != 1 {
		return n, err
	}
	c.held.keep(ops[0], key, gen, d.lastBarriers.Load())
	return n, nil
}

// record records the operations into c's command buffer, in order, with
// timestamps before the first dispatch and after the last, and a barrier
// before every dispatch that shares bytes of a buffer with one recorded
// since the last barrier (and one before the first dispatch when lead is
// set: the work continues an earlier submission's). Every binding counts
// as written, so the rule needs nothing from the kernels, and
// independent operations run side by side. It returns the number of
// dispatches. The buffer is left open: post ends and submits it.
func (d *device) record(c *execCtx, ops []*batchOp, lead bool) (int, error) {
	n := 0
	for _, op := range ops {
		n += len(op.recs)
	}
	if err := d.ensureSets(c, n); err != nil {
		return 0, err
	}
	infos := make([]bufferBinding, 0, n*maxBindings)
	for _, op := range ops {
		for i := range op.recs {
			infos = append(infos, op.recs[i].infos[:]...)
		}
	}
	bars := d.barriersFor(c, ops, infos)
	sets, r := shimWriteSets(d.instance, d.dev, c.dpool, d.dsl, maxBindings, infos)
	if err := check(r, "allocate descriptor sets"); err != nil {
		return 0, err
	}
	if err := d.begin(c); err != nil {
		return 0, err
	}
	cmd := c.cmd
	if c.hasQry {
		vk.CmdResetQueryPool(cmd, c.qpool, 0, 2)
	}
	if lead {
		// The first scope of a barrier holds every command submitted
		// to the queue before it: this orders the work after the
		// earlier submissions' writes.
		d.barrier(cmd, vk.AccessShaderWriteBit|vk.AccessTransferWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit|vk.AccessTransferWriteBit,
			vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit, vk.PipelineStageComputeShaderBit|vk.PipelineStageTransferBit)
	}
	push := new([4 + maxBindings]uint32)
	set, barriers := 0, 0
	for oi, op := range ops {
		if len(op.fills) > 0 {
			if set > 0 {
				d.barrier(cmd, vk.AccessShaderReadBit|vk.AccessShaderWriteBit, vk.AccessTransferWriteBit,
					vk.PipelineStageComputeShaderBit, vk.PipelineStageTransferBit)
			}
			for _, o := range op.fills {
				vk.CmdFillBuffer(cmd, o.buf.buf, vk.DeviceSize(o.buf.offset), vk.DeviceSize(o.buf.size), o.poison)
			}
			d.barrier(cmd, vk.AccessTransferWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit,
				vk.PipelineStageTransferBit, vk.PipelineStageComputeShaderBit)
		}
		if oi == 0 && c.hasQry {
			vk.CmdWriteTimestamp(cmd, vk.PipelineStageTopOfPipeBit, c.qpool, 0)
		}
		for i := range op.recs {
			r := &op.recs[i]
			if bars[set] && set > 0 && !d.skipBarriers {
				d.barrier(cmd, vk.AccessShaderWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit,
					vk.PipelineStageComputeShaderBit, vk.PipelineStageComputeShaderBit)
				barriers++
			}
			vk.CmdBindPipeline(cmd, vk.PipelineBindPointCompute, r.pipe)
			vk.CmdBindDescriptorSets(cmd, vk.PipelineBindPointCompute, d.layout, 0, 1, []vk.DescriptorSet{sets[set]}, 0, nil)
			*push = r.push
			vk.CmdPushConstants(cmd, d.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, pushBytes, unsafe.Pointer(&push[0]))
			vk.CmdDispatch(cmd, r.gx, r.gy, 1)
			set++
		}
	}
	if c.hasQry {
		vk.CmdWriteTimestamp(cmd, vk.PipelineStageBottomOfPipeBit, c.qpool, 1)
	}
	d.lastBarriers.Store(int64(barriers))
	return n, nil
}

// barriersFor says, for each dispatch of ops (whose bindings are infos,
// maxBindings each), whether a barrier goes before it: whether it shares
// bytes of a buffer with a dispatch since the last barrier (or poison
// fill). The placeholder bound for absent operands is read and written
// by no kernel, but a layer validating synchronization cannot know that:
// each placeholder binding since the last barrier gets bytes of its own
// (d.holes), and a barrier goes where they run out.
func (d *device) barriersFor(c *execCtx, ops []*batchOp, infos []bufferBinding) []bool {
	bars, pending := c.bars[:0], c.pending[:0]
	hole, k := 0, 0
	for _, op := range ops {
		if len(op.fills) > 0 {
			pending, hole = pending[:0], 0
		}
		for range op.recs {
			ri := infos[k*maxBindings : (k+1)*maxBindings]
			k++
			holes, shared := 0, false
			for _, a := range ri {
				if a.buf == d.placeholder.buf {
					holes++
					continue
				}
				for _, p := range pending {
					if a.buf == p.buf && a.offset < p.offset+p.rng && p.offset < a.offset+a.rng {
						shared = true
					}
				}
			}
			bar := shared || hole+holes > d.holes
			if bar {
				pending, hole = pending[:0], 0
			}
			for j := range ri {
				if ri[j].buf == d.placeholder.buf {
					ri[j].offset, ri[j].rng = uint64(int64(hole)*d.holeBytes), uint64(d.holeBytes)
					hole++
				} else {
					pending = append(pending, ri[j])
				}
			}
			bars = append(bars, bar)
		}
	}
	c.bars, c.pending = bars, pending[:0]
	return bars
}

// checkOpGuards checks the guards of every operation's buffers (guards
// on), naming the operation whose kernels overwrote one.
func (d *device) checkOpGuards(ops []*batchOp) error {
	for _, op := range ops {
		if err := d.checkGuards(op.ks); err != nil {
			if op.op != "" {
				err = fmt.Errorf("%s %s: %w", op.op, op.dir, err)
			}
			return err
		}
	}
	return nil
}

// recording is what a context's command buffer was recorded from: one
// operation's dispatches and poison fills, the device's bufGen at the
// time, and the barriers recording put between them.
type recording struct {
	ok       bool
	gen      uint64
	key      uint64 // the digest of recs and fills (batchOp.digest)
	recs     []dispatchRec
	fills    []fillRec
	barriers int64
}

// fillRec is one poison fill as recorded.
type fillRec struct {
	buf          vk.Buffer
	offset, size int64
	poison       uint32
}

func fillOf(o operand) fillRec {
	return fillRec{buf: o.buf.buf, offset: o.buf.offset, size: o.buf.size, poison: o.poison}
}

// matches says whether r holds exactly op's commands, whose digest is
// key, and no buffer has been destroyed or wrapped since it was recorded
// (gen). The digest tells most other recordings apart at the cost of one
// comparison.
func (r *recording) matches(op *batchOp, key, gen uint64) bool {
	if !r.ok || r.key != key || r.gen != gen || len(r.recs) != len(op.recs) || len(r.fills) != len(op.fills) {
		return false
	}
	for i := range op.recs {
		if r.recs[i] != op.recs[i] {
			return false
		}
	}
	for i, o := range op.fills {
		if r.fills[i] != fillOf(o) {
			return false
		}
	}
	return true
}

// keep remembers that the context's buffer now holds op's commands,
// whose digest is key.
func (r *recording) keep(op *batchOp, key, gen uint64, barriers int64) {
	r.recs = append(r.recs[:0], op.recs...)
	r.fills = r.fills[:0]
	for _, o := range op.fills {
		r.fills = append(r.fills, fillOf(o))
	}
	r.key, r.gen, r.barriers, r.ok = key, gen, barriers, true
}

// digestSeed seeds batchOp.digest for the life of the process.
var digestSeed = maphash.MakeSeed()

// digest is a hash of op's dispatches and fills: equal for equal
// commands.
func (op *batchOp) digest() uint64 {
	var h maphash.Hash
	h.SetSeed(digestSeed)
	for _, r := range op.recs {
		maphash.WriteComparable(&h, r)
	}
	for _, o := range op.fills {
		maphash.WriteComparable(&h, fillOf(o))
	}
	return h.Sum64()
}

const (
	queryCap       = 16
	stagingDefault = 64 << 20
	fenceTimeoutNs = 300 * uint64(time.Second)
	pushBytes      = 4 * (4 + maxBindings)
)
