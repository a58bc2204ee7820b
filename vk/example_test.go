package vk_test

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/vk"
)

// Running a linear scan on the Vulkan device, with a fallback message when
// none is present.
func Example() {
	b := vk.New()
	if st := b.Status(); !st.Available {
		fmt.Println(st.Reason)
		return
	}
	// h_t = a_t * h_{t-1} + b_t over B=1, T=4, D=2.
	aHost, _ := scans.FromFloat32([]float32{0.5, 1, 0.5, 1, 0.5, 1, 0.5, 1}, 1, 4, 2)
	bHost, _ := scans.FromFloat32([]float32{1, 1, 1, 1, 1, 1, 1, 1}, 1, 4, 2)
	a, err := b.Upload(aHost)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Release(a)
	x, err := b.Upload(bHost)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Release(x)
	h, err := b.LinearScan(a, x, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Release(h)
	out, _ := b.Download(h)
	fmt.Println(out.Float32s())
	if d, ok := b.LastKernelTime(); ok {
		_ = d // device time of the scan's dispatches
	}
}
