// Package cuda runs the minGRU scans on an NVIDIA GPU through the CUDA
// driver API. It implements scans.Backend, scans.Instrumented,
// scans.QueuedTimer and scans.CacheFlusher; most programs reach it through
// package dispatch (MINGRU_SCAN=cuda or auto).
//
// The backend is compiled with the build tag cuda and needs CUDA's cuda.h
// (11.x or 12.x) at build time (Debian's nvidia-cuda-dev, or
// scripts/cuda-headers.sh):
//
//	go build -tags cuda ./...
//
// Without the tag, Status says "CUDA not built in: rebuild with -tags
// cuda" and every operation returns a *scans.UnavailableError. With it,
// the package does not link libcuda: it opens libcuda.so.1 the first time
// the backend is used, so a binary starts on any machine and Status says
// why CUDA is missing ("CUDA not available: ..."). It calls the driver API
// itself rather than through gorgonia.org/cu, which calls cuInit when
// imported and ends the process on a machine without a driver.
//
//	b := cuda.New()
//	if st := b.Status(); !st.Available {
//		log.Fatal(st.Reason)
//	}
//	a, _ := b.Upload(aHost) // (B,T,D)
//	x, _ := b.Upload(xHost)
//	h, err := b.LinearScan(a, x, nil)
//	if err != nil {
//		log.Fatal(err)
//	}
//	out, _ := b.Download(h)
//	b.Release(a); b.Release(x); b.Release(h)
//
// Guarantees. Every kernel accumulates in f32 (plain FMA, never TF32 or
// tensor cores) and rounds 16-bit outputs to nearest even at the store;
// NaN and Inf propagate as in the sequential reference; no thread block
// waits on another. Shapes outside the envelope return *scans.ScanFallback
// and run nothing. Every method is safe for concurrent use: each runs its
// driver calls on its own locked OS thread, with the device's primary
// context current, under one lock.
//
// Devices. New runs on the device MINGRU_CUDA_DEVICE names (a CUDA
// ordinal, default 0), NewOn on any ordinal, and Devices lists them. Every
// backend works in its device's primary context, which other CUDA
// libraries in the process share: Wrap makes a tensor of their device
// memory without a copy (WrapOn also orders the backend's calls with
// their stream), Tensor.Ptr gives a tensor's address, and Context and
// Stream say where the backend's work runs.
//
// Execution. An operation enqueues its kernel on the default stream and
// returns; Download (and LastKernelTime) waits for it. NewQueue gives a
// queue (scans.Queue) on a stream of its own, waited for once. Device
// memory is pooled: Release returns it to a cache that later calls draw
// from (CachedBytes, EmptyCache), and Close frees everything.
//
// The kernels (kernels/*.cu) are compiled to PTX by go generate (nvcc
// 11.8, compute_80) and embedded; the driver compiles the PTX for the GPU
// it finds when an operation first needs a module. A test fails when the
// embedded PTX is stale. Each operation is one launch between two events
// (LastKernelTime); with SetQueuedTiming(true), as scanbench runs, each
// launch waits behind a short busy kernel so that the events time the
// device's work alone.
//
// Without a GPU, TestKernelsEmulated compiles the kernels as C++ (a fiber
// per CUDA thread) and runs the conformance matrix against eager;
// with the cuda tag, TestFakeDriver reruns the GPU tests through a
// stand-in libcuda.so.1. They check index math, chunking, barriers and
// host code, not the GPU's arithmetic. The kernels' layouts and the
// measurements behind each choice are in DESIGN.md beside this file.
package cuda
