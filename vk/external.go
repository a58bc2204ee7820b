//go:build cgo

package vk

import (
	"fmt"
	"os"
	"sync"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

// External names Vulkan objects that the caller made, for NewFrom: a
// training stack that already runs on a Vulkan device shares it with the
// backend instead of the backend making its own.
type External struct {
	Instance vk.Instance
	// APIVersion is the apiVersion the instance was created with
	// (vk.MakeVersion); 0 means Vulkan 1.0. The subgroup kernels need 1.1
	// on both the instance and the device; without it, kernels that
	// compute the same numbers without subgroup operations run.
	APIVersion     uint32
	PhysicalDevice vk.PhysicalDevice
	Device         vk.Device // made from PhysicalDevice
	// QueueFamily and QueueIndex name the queue the backend submits to:
	// a family with compute, and a queue the device was created with.
	QueueFamily uint32
	QueueIndex  uint32
	// QueueLock, when set, is held around each of the backend's
	// submissions, for a caller that submits to the same queue from other
	// goroutines (vkQueueSubmit needs the queue externally synchronized).
	// When nil, the caller must not submit to the queue while a backend
	// call or a queue Wait is running.
	QueueLock sync.Locker
	// FullSubgroups says that the device was created with
	// VK_EXT_subgroup_size_control (or Vulkan 1.3) and its
	// subgroupSizeControl and computeFullSubgroups features enabled.
	// Where the device's subgroup size varies, the subgroup kernels run
	// only with them.
	FullSubgroups bool
}

// NewFrom returns a Vulkan backend on the caller's instance, device and
// queue. It opens at once: the error is a *scans.ArgError naming the
// field of ext that is wrong, or why the device cannot run the kernels.
//
// The backend makes its own pipelines, command pools and memory on the
// device, and Close frees them; it never destroys the instance or the
// device, which the caller destroys after Close. Close waits for the
// backend's queue to be idle. Tensors are exchanged with WrapBuffer and
// Tensor.Buffer, under the synchronization WrapBuffer describes; the
// validation layer and MINGRU_VK_DEVICE play no part (the caller chose
// the device and its layers).
func NewFrom(ext External) (b *Backend, err error) {
	defer recoverTo("NewFrom", &err)
	bad := func(field, want, got string) error {
		return &scans.ArgError{Op: "NewFrom", Arg: field, Want: want, Got: got}
	}
	switch {
	case ext.Instance == nil:
		return nil, bad("Instance", "a VkInstance", "nil")
	case ext.PhysicalDevice == nil:
		return nil, bad("PhysicalDevice", "a VkPhysicalDevice", "nil")
	case ext.Device == nil:
		return nil, bad("Device", "a VkDevice", "nil")
	}
	b = newBackend(config{loader: "libvulkan.so.1", pipeLog: os.Getenv("MINGRU_VK_PIPELINE_LOG"), guard: guardFromEnv()})
	d, err := openExternal(b.cfg, ext)
	if err != nil {
		return nil, err
	}
	b.dev = d
	b.once.Do(func() {})
	return b, nil
}

// openExternal checks ext against the instance and prepares the device.
func openExternal(cfg config, ext External) (_ *device, err error) {
	if err := loadLoader(cfg.loader); err != nil {
		return nil, &scans.UnavailableError{Backend: "vulkan", Reason: "Vulkan not available: " + err.Error()}
	}
	if err := vk.InitInstance(ext.Instance); err != nil {
		return nil, fmt.Errorf("vk: NewFrom: load instance functions: %w", err)
	}
	lock := ext.QueueLock
	if lock == nil {
		lock = &sync.Mutex{}
	}
	d := newDevice(cfg, lock)
	d.external, d.instance, d.api = true, ext.Instance, ext.APIVersion
	if d.api == 0 {
		d.api = vk.MakeVersion(1, 0, 0)
	}
	cands, err := d.candidates()
	if err != nil {
		return nil, fmt.Errorf("vk: NewFrom: %w", err)
	}
	var pick *candidate
	for i := range cands {
		if cands[i].phys == ext.PhysicalDevice {
			pick = &cands[i]
		}
	}
	if pick == nil {
		return nil, &scans.ArgError{Op: "NewFrom", Arg: "PhysicalDevice", Want: "a physical device of Instance",
			Got: fmt.Sprintf("none of its %d", len(cands))}
	}
	fams := shimQueueFamilies(ext.Instance, ext.PhysicalDevice)
	if int(ext.QueueFamily) >= len(fams) || fams[ext.QueueFamily].flags&uint32(vk.QueueComputeBit) == 0 {
		return nil, &scans.ArgError{Op: "NewFrom", Arg: "QueueFamily", Want: fmt.Sprintf("a family with compute of the %d of %s", len(fams), pick.name),
			Got: fmt.Sprint(ext.QueueFamily)}
	}
	f := fams[ext.QueueFamily]
	if ext.QueueIndex >= f.count {
		return nil, &scans.ArgError{Op: "NewFrom", Arg: "QueueIndex", Want: fmt.Sprintf("below the family's %d queues", f.count),
			Got: fmt.Sprint(ext.QueueIndex)}
	}
	d.describe(pick)
	d.fullSubgroups = d.fullSubgroups && ext.FullSubgroups
	d.useFamily(family{index: ext.QueueFamily, tsBits: f.tsBits})
	d.dev = ext.Device
	var q vk.Queue
	vk.GetDeviceQueue(d.dev, ext.QueueFamily, ext.QueueIndex, &q)
	d.queue = q
	defer func() {
		if err != nil {
			d.destroy()
		}
	}()
	if err := d.prepare(cfg); err != nil {
		return nil, fmt.Errorf("vk: NewFrom: %w", err)
	}
	return d, nil
}
