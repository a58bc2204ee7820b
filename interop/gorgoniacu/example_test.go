//go:build cuda

package gorgoniacu_test

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/mingru/scans"
	"github.com/mingru/scans/cuda"
	"github.com/mingru/scans/interop/gorgoniacu"
)

// Memory that gorgonia.org/cu allocated in the device's primary context,
// scanned in place. It needs a CUDA GPU: go test -tags cuda here.
func ExampleTensor() {
	ctx, err := cu.Device(0).RetainPrimaryCtx()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ctx.Lock(); err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Unlock()
	a := []float32{0.5, 0.5, 0.5, 0.5}
	x := []float32{1, 1, 1, 1}
	pa, _ := cu.MemAlloc(16)
	px, _ := cu.MemAlloc(16)
	ph, _ := cu.MemAlloc(16)
	defer cu.MemFree(pa)
	defer cu.MemFree(px)
	defer cu.MemFree(ph)
	cu.MemcpyHtoD(pa, unsafe.Pointer(&a[0]), 16)
	cu.MemcpyHtoD(px, unsafe.Pointer(&x[0]), 16)

	b := cuda.New()
	defer b.Close()
	ta, err := gorgoniacu.Tensor(b, pa, scans.F32, 1, 4, 1) // (B,T,D)
	if err != nil {
		fmt.Println(err)
		return
	}
	tx, _ := gorgoniacu.Tensor(b, px, scans.F32, 1, 4, 1)
	th, _ := gorgoniacu.Tensor(b, ph, scans.F32, 1, 4, 1)
	if _, err := b.Run(&scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward,
		Args: []scans.Tensor{ta, tx, nil}, Out: []scans.Tensor{th}}); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := b.Download(th) // waits for the scan
	fmt.Println(h.Float32s(), gorgoniacu.DevicePtr(th) == ph)
	// Output: [1 1.5 1.75 1.875] true
}
