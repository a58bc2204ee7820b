//go:build cgo

package vk

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// execCtx is what one operation records into: reused across calls, one per
// concurrent caller.
type execCtx struct {
	pool   vk.CommandPool
	cmd    vk.CommandBuffer
	fence  vk.Fence
	dpool  vk.DescriptorPool
	dcap   int
	qpool  vk.QueryPool
	qcap   uint32
	hasQry bool
	// record's scratch: a barrier before each dispatch, and the
	// bindings since the last barrier.
	bars    []bool
	pending []bufferBinding
	// open: recording has begun and not ended. held: what the ended
	// buffer holds, when it may be submitted again (see ready). used:
	// when ctxFor last took it.
	open bool
	held recording
	used uint64
	// stampMu guards watcher, the lastTime that waits for the
	// timestamps of c's last submission (see settle).
	stampMu sync.Mutex
	watcher *lastTime
}

// heldCap is how many contexts may hold a synchronous call's recording
// before a context that holds one is recorded over: enough for a
// training step of 32 calls whose outputs, released when the step ends,
// come back from the pool in one order and then in the other (the pool
// hands out the buffer released last first).
const heldCap = 64

// getCtx takes a free context for work recorded anew (see ctxFor).
func (d *device) getCtx() (*execCtx, error) {
	c, _, err := d.ctxFor(nil, 0, 0)
	return c, err
}

// ctxFor takes a free recording context. Given an operation and its
// digest key, it takes the context whose held recording matches it, if
// one does (and says so). Otherwise it takes one that holds no
// recording, else a new one while fewer than heldCap exist, else the one
// used least recently.
func (d *device) ctxFor(op *batchOp, key, gen uint64) (*execCtx, bool, error) {
	d.ctxMu.Lock()
	d.ctxTick++
	tick := d.ctxTick
	pick, matched := -1, false
	if op != nil {
		for i, c := range d.ctxFree {
			if c.held.matches(op, key, gen) {
				pick, matched = i, true
				break
			}
		}
	}
	for i := len(d.ctxFree) - 1; pick < 0 && i >= 0; i-- {
		if !d.ctxFree[i].held.ok {
			pick = i
		}
	}
	if pick < 0 && len(d.ctxFree) > 0 && len(d.ctxAll) >= heldCap {
		pick = 0
		for i, c := range d.ctxFree {
			if c.used < d.ctxFree[pick].used {
				pick = i
			}
		}
	}
	if pick >= 0 {
		c := d.ctxFree[pick]
		d.ctxFree = append(d.ctxFree[:pick], d.ctxFree[pick+1:]...)
		c.used = tick
		d.ctxMu.Unlock()
		d.settle(c)
		return c, matched, nil
	}
	d.ctxMu.Unlock()
	c, err := d.newCtx()
	if err != nil {
		return nil, false, err
	}
	c.used = tick
	return c, false, nil
}

// newCtx makes a recording context.
func (d *device) newCtx() (*execCtx, error) {
	c := &execCtx{}
	pinfo := &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, QueueFamilyIndex: d.qfam}
	var pool vk.CommandPool
	if err := check(vk.CreateCommandPool(d.dev, pinfo, nil, &pool), "create command pool"); err != nil {
		return nil, err
	}
	c.pool = pool
	cmds := make([]vk.CommandBuffer, 1)
	ainfo := &vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        c.pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	if err := check(vk.AllocateCommandBuffers(d.dev, ainfo, cmds), "allocate command buffer"); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool, nil)
		return nil, err
	}
	c.cmd = cmds[0]
	var fence vk.Fence
	if err := check(vk.CreateFence(d.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}, nil, &fence), "create fence"); err != nil {
		vk.DestroyCommandPool(d.dev, c.pool, nil)
		return nil, err
	}
	c.fence = fence
	if d.hasTimestamps {
		qinfo := &vk.QueryPoolCreateInfo{
			SType:      vk.StructureTypeQueryPoolCreateInfo,
			QueryType:  vk.QueryTypeTimestamp,
			QueryCount: queryCap,
		}
		var qp vk.QueryPool
		if err := check(vk.CreateQueryPool(d.dev, qinfo, nil, &qp), "create query pool"); err != nil {
			vk.DestroyFence(d.dev, c.fence, nil)
			vk.DestroyCommandPool(d.dev, c.pool, nil)
			return nil, err
		}
		c.qpool = qp
		c.qcap = queryCap
		c.hasQry = true
	}
	d.ctxMu.Lock()
	d.ctxAll = append(d.ctxAll, c)
	d.ctxMu.Unlock()
	return c, nil
}

// leave makes w wait for the timestamps of c's last submission, which
// ran to completion: they are read when w is asked for them
// (lastTime.settle) or before c is taken again (settle), whichever comes
// first. c must not yet be back among the free contexts.
func (d *device) leave(c *execCtx, w *lastTime) {
	c.stampMu.Lock()
	c.watcher = w
	w.mu.Lock()
	w.ctx, w.dev = c, d
	w.mu.Unlock()
	c.stampMu.Unlock()
}

// settle reads the timestamps of c's last submission into the lastTime
// that waits for them, if one still does. ctxFor calls it before c is
// recorded or submitted again, destroy before c goes.
func (d *device) settle(c *execCtx) {
	c.stampMu.Lock()
	defer c.stampMu.Unlock()
	w := c.watcher
	if w == nil {
		return
	}
	c.watcher = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx != c {
		return // w has a later operation's time
	}
	d.stampReads.Add(1)
	ts, err := d.timestamps(c, 2)
	w.ctx, w.ns, w.ok = nil, 0, false
	if err == nil {
		w.ns, w.ok = int64(ts[0]), true
	}
}

func (d *device) putCtx(c *execCtx) {
	d.ctxMu.Lock()
	d.ctxFree = append(d.ctxFree, c)
	d.ctxMu.Unlock()
}

// ensureSets makes the context's descriptor pool hold n sets and resets it.
func (d *device) ensureSets(c *execCtx, n int) error {
	c.held.ok = false // its descriptor sets go with the pool's reset
	if n > c.dcap {
		if c.dpool != vk.NullDescriptorPool {
			vk.DestroyDescriptorPool(d.dev, c.dpool, nil)
			c.dpool, c.dcap = vk.NullDescriptorPool, 0
		}
		capacity := 8
		for capacity < n {
			capacity *= 2
		}
		dp, r := shimCreatePool(d.instance, d.dev, uint32(capacity), uint32(capacity*maxBindings))
		if err := check(r, "create descriptor pool"); err != nil {
			return err
		}
		c.dpool = dp
		c.dcap = capacity
		return nil
	}
	return check(vk.ResetDescriptorPool(d.dev, c.dpool, 0), "reset descriptor pool")
}

// begin resets the context and starts recording.
func (d *device) begin(c *execCtx) error {
	c.held.ok = false
	if err := check(vk.ResetCommandPool(d.dev, c.pool, 0), "reset command pool"); err != nil {
		return err
	}
	// Not one-time-submit: a synchronous call may submit the buffer again.
	info := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo}
	if err := check(vk.BeginCommandBuffer(c.cmd, info), "begin command buffer"); err != nil {
		return err
	}
	c.open = true
	return nil
}

// submit ends recording, submits and waits for the fence.
func (d *device) submit(c *execCtx) error {
	if err := d.post(c); err != nil {
		return err
	}
	return d.await(c)
}

// post ends recording, if it is open, and submits (the queue is shared,
// so under a mutex), without waiting.
func (d *device) post(c *execCtx) error {
	if c.open {
		c.open = false
		if err := check(vk.EndCommandBuffer(c.cmd), "end command buffer"); err != nil {
			return err
		}
	}
	d.queueMu.Lock()
	r := shimSubmit(d.instance, d.queue, c.cmd, c.fence)
	d.queueMu.Unlock()
	return check(r, "queue submit")
}

// await waits for the fence of c's submission and resets it.
func (d *device) await(c *execCtx) error {
	r := d.waitFence(c.fence)
	if r == vk.Timeout {
		return fmt.Errorf("vk: wait for fence: timed out after %v", time.Duration(fenceTimeoutNs))
	}
	if err := check(r, "wait for fence"); err != nil {
		return err
	}
	return check(vk.ResetFences(d.dev, 1, []vk.Fence{c.fence}), "reset fence")
}

// fenceSpin is how long waitFence polls a fence before it blocks in
// vkWaitForFences: a blocked wait on NVIDIA's driver wakes well after the
// fence signals, which a short call would pay in full.
const fenceSpin = 2 * time.Millisecond

// waitFence waits for f: on a GPU by polling it for up to fenceSpin, then
// blocking; on a CPU device (whose threads the poll would take a core
// from) by blocking at once.
func (d *device) waitFence(f vk.Fence) vk.Result {
	if !d.software {
		start := time.Now()
		for time.Since(start) < fenceSpin {
			switch r := vk.GetFenceStatus(d.dev, f); r {
			case vk.Success:
				return r
			case vk.NotReady:
			default:
				return r
			}
		}
	}
	return vk.WaitForFences(d.dev, 1, []vk.Fence{f}, vk.True, fenceTimeoutNs)
}

// timestamps reads n timestamps written by the last submission and returns
// the n-1 intervals.
func (d *device) timestamps(c *execCtx, n uint32) ([]time.Duration, error) {
	raw, err := d.rawTimestamps(c, n)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, n-1)
	for i := range out {
		dt := (raw[i+1] - raw[i]) & d.tsMask
		out[i] = time.Duration(float64(dt) * d.tsPeriod)
	}
	return out, nil
}

// rawTimestamps reads the first n timestamps of c's last submission, in
// device ticks.
func (d *device) rawTimestamps(c *execCtx, n uint32) ([]uint64, error) {
	raw := make([]uint64, n)
	r := vk.GetQueryPoolResults(d.dev, c.qpool, 0, n, uint(8*n), unsafe.Pointer(&raw[0]), 8,
		vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit))
	return raw, check(r, "read timestamps")
}

// ticks converts an interval of device ticks to a duration.
func (d *device) ticks(from, to uint64) time.Duration {
	return time.Duration(float64((to-from)&d.tsMask) * d.tsPeriod)
}

func (d *device) barrier(cmd vk.CommandBuffer, src, dst vk.AccessFlagBits, srcStage, dstStage vk.PipelineStageFlagBits) {
	shimBarrier(d.instance, cmd, srcStage, dstStage, src, dst)
}

// beginBound starts recording on c with pipeline p bound and one
// descriptor set: bufs at bindings 0, 1, ..., the placeholder at the
// others. The probes, which run one small kernel, record this way.
func (d *device) beginBound(c *execCtx, p vk.Pipeline, bufs ...bufferBinding) error {
	if err := d.ensureSets(c, 1); err != nil {
		return err
	}
	infos := make([]bufferBinding, maxBindings)
	for i := range infos {
		infos[i] = bufferBinding{buf: d.placeholder.buf, rng: uint64(d.placeholder.size)}
	}
	copy(infos, bufs)
	sets, r := shimWriteSets(d.instance, d.dev, c.dpool, d.dsl, maxBindings, infos)
	if err := check(r, "allocate descriptor sets"); err != nil {
		return err
	}
	if err := d.begin(c); err != nil {
		return err
	}
	vk.CmdBindPipeline(c.cmd, vk.PipelineBindPointCompute, p)
	vk.CmdBindDescriptorSets(c.cmd, vk.PipelineBindPointCompute, d.layout, 0, 1, []vk.DescriptorSet{sets[0]}, 0, nil)
	return nil
}
