//go:build cgo

package vk

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"

	vk "github.com/vulkan-go/vulkan"

	"github.com/mingru/scans"
)

// callerDevice is an instance and a device that the test makes through
// vulkan-go, as a training stack that runs on Vulkan has them.
type callerDevice struct {
	inst  vk.Instance
	phys  vk.PhysicalDevice
	dev   vk.Device
	fam   uint32
	debug vk.DebugReportCallback
}

// newCallerDevice makes a Vulkan 1.1 instance, with the validation layer
// and the package's message recorder where the tests run with it, and a
// device with one queue of the first family with compute of the first
// physical device.
func newCallerDevice(t *testing.T) *callerDevice {
	t.Helper()
	if st := New().Status(); !st.Available {
		t.Skipf("no Vulkan device: %s", st.Reason)
	}
	if err := loadLoader("libvulkan.so.1"); err != nil {
		t.Fatal(err)
	}
	validation := os.Getenv("MINGRU_VK_VALIDATION") == "1"
	app := &vk.ApplicationInfo{SType: vk.StructureTypeApplicationInfo, ApiVersion: vk.MakeVersion(1, 1, 0)}
	info := &vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: app}
	if validation {
		info.EnabledLayerCount = 1
		info.PpEnabledLayerNames = []string{"VK_LAYER_KHRONOS_validation\x00"}
		info.EnabledExtensionCount = 1
		info.PpEnabledExtensionNames = []string{"VK_EXT_debug_report\x00"}
	}
	c := &callerDevice{}
	if r := vk.CreateInstance(info, nil, &c.inst); r != vk.Success {
		t.Fatalf("vkCreateInstance: %v", vk.Error(r))
	}
	runtime.KeepAlive(info)
	if err := vk.InitInstance(c.inst); err != nil {
		t.Fatal(err)
	}
	if validation {
		cb := &vk.DebugReportCallbackCreateInfo{
			SType:       vk.StructureTypeDebugReportCallbackCreateInfo,
			Flags:       vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit | vk.DebugReportPerformanceWarningBit),
			PfnCallback: debugReport,
		}
		if r := vk.CreateDebugReportCallback(c.inst, cb, nil, &c.debug); r != vk.Success {
			t.Fatalf("vkCreateDebugReportCallback: %v", vk.Error(r))
		}
	}
	var n uint32
	vk.EnumeratePhysicalDevices(c.inst, &n, nil)
	physs := make([]vk.PhysicalDevice, n)
	vk.EnumeratePhysicalDevices(c.inst, &n, physs)
	c.phys = physs[0]
	var nf uint32
	vk.GetPhysicalDeviceQueueFamilyProperties(c.phys, &nf, nil)
	fams := make([]vk.QueueFamilyProperties, nf)
	vk.GetPhysicalDeviceQueueFamilyProperties(c.phys, &nf, fams)
	c.fam = nf
	for i := range fams {
		fams[i].Deref()
		if fams[i].QueueFlags&vk.QueueFlags(vk.QueueComputeBit) != 0 {
			c.fam = uint32(i)
			break
		}
	}
	if c.fam == nf {
		c.destroy()
		t.Skip("the first device has no compute queue")
	}
	qinfo := []vk.DeviceQueueCreateInfo{{SType: vk.StructureTypeDeviceQueueCreateInfo, QueueFamilyIndex: c.fam,
		QueueCount: 1, PQueuePriorities: []float32{1}}}
	dinfo := &vk.DeviceCreateInfo{SType: vk.StructureTypeDeviceCreateInfo, QueueCreateInfoCount: 1, PQueueCreateInfos: qinfo}
	if r := vk.CreateDevice(c.phys, dinfo, nil, &c.dev); r != vk.Success {
		c.destroy()
		t.Fatalf("vkCreateDevice: %v", vk.Error(r))
	}
	runtime.KeepAlive(dinfo)
	return c
}

func (c *callerDevice) external() External {
	return External{Instance: c.inst, APIVersion: vk.MakeVersion(1, 1, 0), PhysicalDevice: c.phys, Device: c.dev, QueueFamily: c.fam}
}

func (c *callerDevice) destroy() {
	if c.dev != nil {
		vk.DestroyDevice(c.dev, nil)
	}
	if c.debug != vk.NullDebugReportCallback {
		vk.DestroyDebugReportCallback(c.inst, c.debug, nil)
	}
	vk.DestroyInstance(c.inst, nil)
}

// TestNewFrom runs the execution cases on a backend built on the test's
// own instance and device, on tensors wrapped around buffers made on that
// device, outputs included; checks that Close leaves the device to the
// caller, usable; and that a wrong field of External is named.
func TestNewFrom(t *testing.T) {
	c := newCallerDevice(t)
	defer c.destroy()
	validationMessages() // start clean
	defer failOnValidation(t)

	var lock countingLock
	ext := c.external()
	ext.QueueLock = &lock
	b, err := NewFrom(ext)
	if err != nil {
		t.Fatal(err)
	}
	b.poison = true
	st := b.Status()
	t.Logf("device: %s (%s); %s", st.Device, st.Driver, st.Notes)
	h, err := b.Handles()
	if err != nil {
		t.Fatal(err)
	}
	if h.Device != c.dev || h.Instance != c.inst || h.QueueFamily != c.fam {
		t.Fatalf("Handles() = %+v, want the caller's objects", h)
	}
	checkWrapped(t, b, h)
	if lock.n == 0 {
		t.Error("the backend submitted without taking External.QueueLock")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LinearScan(nil, nil, nil); !errors.Is(err, scans.ErrClosed) {
		t.Errorf("a call after Close: %v, want ErrClosed", err)
	}
	// The device is still the caller's: it makes and frees a buffer.
	e, err := newExtBuffer(h, 4096)
	if err != nil {
		t.Fatalf("the caller's device after Close: %v", err)
	}
	e.free(h)
	if r := vk.DeviceWaitIdle(c.dev); r != vk.Success {
		t.Fatalf("vkDeviceWaitIdle after Close: %v", vk.Error(r))
	}

	other := newCallerDevice(t)
	defer other.destroy()
	for _, tc := range []struct {
		arg string
		mod func(*External)
	}{
		{"Instance", func(e *External) { e.Instance = nil }},
		{"PhysicalDevice", func(e *External) { e.PhysicalDevice = nil }},
		{"Device", func(e *External) { e.Device = nil }},
		{"PhysicalDevice", func(e *External) { e.PhysicalDevice = other.phys }},
		{"QueueFamily", func(e *External) { e.QueueFamily = 64 }},
		{"QueueIndex", func(e *External) { e.QueueIndex = 1 << 20 }},
	} {
		e := c.external()
		tc.mod(&e)
		b, err := NewFrom(e)
		var ae *scans.ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg || b != nil {
			t.Errorf("NewFrom with a bad %s: %v, %v; want a nil backend and an ArgError naming it", tc.arg, b, err)
		}
	}
}

// countingLock is a mutex that counts how often it was taken.
type countingLock struct {
	mu sync.Mutex
	n  int
}

func (l *countingLock) Lock()   { l.mu.Lock(); l.n++ }
func (l *countingLock) Unlock() { l.mu.Unlock() }

// NewFromTest returns a backend made by NewFrom on an instance and a
// device of the test's own, destroyed when the test ends (for the
// package's external tests).
func NewFromTest(t *testing.T) *Backend {
	c := newCallerDevice(t)
	b, err := NewFrom(c.external())
	if err != nil {
		c.destroy()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		c.destroy()
	})
	return b
}
