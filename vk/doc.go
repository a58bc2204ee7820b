// Package vk runs the minGRU scan kernels on any Vulkan device: GLSL
// compute shaders (package shaders, compiled to SPIR-V and embedded in the
// binary) driven through github.com/vulkan-go/vulkan.
//
// New returns a *Backend implementing scans.Backend, scans.Instrumented
// and scans.CacheFlusher. It touches no driver: the first call to Status
// or to an operation opens libvulkan.so.1 (the runtime loader), creates an
// instance and a device, and remembers the outcome. Without a loader or a
// device, Status says why ("Vulkan not available: ..."); nothing crashes.
//
//	b := vk.New()
//	if st := b.Status(); !st.Available {
//		log.Fatal(st.Reason)
//	}
//	a, _ := b.Upload(aHost) // *scans.Host -> *vk.Tensor
//	x, _ := b.Upload(xHost)
//	h, err := b.LinearScan(a, x, nil)
//	if err != nil { ... }
//	hHost, _ := b.Download(h)
//	b.Release(a); b.Release(x); b.Release(h)
//
// Operations take *Tensor values of the same backend (anything else is a
// *scans.ArgError naming the argument) and return *scans.ScanFallback,
// running nothing, for shapes outside the kernel envelope (Supports).
// Device failures come back as *scans.KernelError. Every method is safe
// for concurrent use.
//
// Guarantees. Every kernel accumulates in f32 and rounds 16-bit outputs to
// nearest even at the store. f16 conversions are exact on every device: the
// device's own instructions are used only where a probe at open found them
// exact on every value, else integer code. The subgroup Givens kernels run
// only where a probe at open found the device's subgroups as it reports
// them (every workgroup size they use, shuffles included); elsewhere the
// Givens kernels without subgroup operations run, which compute the same
// numbers. Status().Notes says which paths a device takes. Tensors larger
// than maxStorageBufferRange are processed in slices of the batch. A
// device may flush f32 subnormals in arithmetic (NVIDIA's does); that error
// is inside every tolerance gate.
//
// Devices lists the physical devices; NewOn makes a backend on any of
// them, and several backends live in one process, each with its own
// tensors. A program that already runs on Vulkan shares its device:
// NewFrom builds a backend on the caller's instance, device and queue,
// WrapBuffer makes a tensor of the caller's VkBuffer without a copy, and
// Tensor.Buffer and Handles give the backend's objects back.
//
// A call waits for its work. A call that repeats a recent one on the same
// tensors (a loop's call, whose outputs come back from the pool or are
// given) submits the command buffer recorded for that one again instead
// of recording anew. The timestamps around a call's work are read when
// LastKernelTime asks for them, so a loop that does not ask does not wait
// for them. A Queue (NewQueue) records calls into command buffers
// submitted without waiting, and Wait waits once.
// Released device memory is pooled (CachedBytes, EmptyCache); Close frees
// everything.
//
// Environment (read by New):
//
//	MINGRU_VK_DEVICE        the physical device: an index into the
//	                        driver's list, or a case-insensitive substring
//	                        of its name (default: discrete GPU, then
//	                        integrated, virtual, CPU)
//	MINGRU_VK_VALIDATION    1: the Khronos validation layer, whose every
//	                        message this package's tests fail on
//	MINGRU_VK_GUARD         1: guard regions after every tensor buffer,
//	                        checked after every run (a test setting)
//	MINGRU_VK_PIPELINE_LOG  a file receiving one line per pipeline built:
//	                        module, specialization, build time and the
//	                        driver's statistics where it gives them
//
// Mesa's lavapipe ends an invocation after 65535 loop iterations, so on a
// CPU device T is limited to 4096 (longer is a ScanFallback). How the
// kernels are laid out, and the measurements behind each choice, are in
// DESIGN.md beside this file.
package vk
