// Package dispatch is the entry point of the library: it runs each scan on
// the fastest backend that can compute it correctly on this machine, and
// never returns a number no backend vouches for.
//
// # Choosing a backend
//
// The environment variable MINGRU_SCAN selects the policy:
//
//	MINGRU_SCAN   behaviour
//	auto          (default) a GPU backend when one is available and the inputs are
//	              in its kernel envelope, CUDA before Vulkan; otherwise, or when a
//	              launch fails, eager, with one warning per process and cause
//	eager         always the pure Go reference
//	cuda          CUDA only; unavailable or out of envelope is an error
//	triton        the same as cuda
//	vulkan        Vulkan only; unavailable or out of envelope is an error
//
// Any other value makes every call return an error naming the valid values.
// A forced backend never degrades silently, so a benchmark cannot measure the
// wrong path. Under auto a Vulkan device that runs on the CPU (Mesa's
// lavapipe) is not preferred to eager; MINGRU_SCAN=vulkan still uses it.
//
// Importing this package touches no GPU driver: the first call that needs a
// backend initializes it. Statuses reports, per backend, whether it is
// available or why not.
//
// # Where results live
//
// A scan runs on the backend where its inputs live. Host tensors
// (*scans.Host) go to the chosen backend and the results come back as host
// tensors. Tensors already on a GPU (from that backend's Upload, or outputs
// of an earlier scan) stay there, and so do the results, so a training loop
// moves data only when it asks to. With several instances of a backend
// in one process (vk.NewOn, cuda.NewOn), each call runs on the instance
// that holds its tensors (scans.Owned), and Copy moves a tensor from one
// to another.
//
// # Execution
//
// Each backend's calls are safe for concurrent use. A call writes its
// results into new tensors, or into tensors the caller gives
// (scans.Call.Out), checked like the arguments, so that a loop allocates
// its outputs once; no operation runs in place. GPU backends keep
// released device memory for reuse (scans.MemoryPool), and Close frees it
// all (Scanner.Close closes every backend).
//
// A queue (Scanner.NewQueue, or a backend's own through scans.Queuer)
// runs calls in order without waiting for each: Run checks a call and
// returns its results at once, and Wait waits for everything enqueued and
// returns the first failure. On Vulkan a queue's calls are recorded into
// one command buffer and submitted once at Wait; on CUDA they go to a
// stream of their own. A Download waits for the work that writes its
// tensor, and a Release while enqueued work still reads a tensor takes
// effect when that work has run. CUDA's synchronous calls also return
// once their kernel is enqueued; Vulkan's wait for their work. A queue is
// for one goroutine; goroutines sharing a backend make one each.
//
// # Example
//
//	a, _ := scans.FromFloat32(aData, B, T, D)
//	b, _ := scans.FromFloat32(bData, B, T, D)
//	h, err := dispatch.LinearScan(a, b, nil) // h is a *scans.Host (B,T,D)
package dispatch
