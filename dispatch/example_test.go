package dispatch_test

import (
	"fmt"

	"github.com/mingru/scans"
	"github.com/mingru/scans/dispatch"
)

// A linear scan over one sequence of three steps and two channels:
// h_t = a_t*h_{t-1} + b_t from h_{-1} = 0.
func ExampleLinearScan() {
	a, _ := scans.FromFloat32([]float32{0.5, 0.9, 0.5, 0.9, 0.5, 0.9}, 1, 3, 2) // (B,T,D)
	b, _ := scans.FromFloat32([]float32{1, 1, 1, 1, 1, 1}, 1, 3, 2)
	h, err := dispatch.LinearScan(a, b, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.(*scans.Host).Float32s())
	// Output: [1 1 1.5 1.9 1.75 2.71]
}

// The backward pass returns the gradient of every input; the gradient of
// an absent initial state is nil.
func ExampleLinearScanBackward() {
	a, _ := scans.FromFloat32([]float32{0.5, 0.5}, 1, 2, 1)
	b, _ := scans.FromFloat32([]float32{1, 1}, 1, 2, 1)
	h, _ := dispatch.LinearScan(a, b, nil)               // h = [1 1.5]
	dh, _ := scans.FromFloat32([]float32{0, 1}, 1, 2, 1) // d loss / d h: loss = h_1
	da, db, dh0, err := dispatch.LinearScanBackward(a, b, nil, h, dh)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(da.(*scans.Host).Float32s(), db.(*scans.Host).Float32s(), dh0 == nil)
	// Output: [0 1] [0.5 1] true
}

// Bad input is an error naming the argument and the expected shape.
func ExampleLinearScan_badShape() {
	a, _ := scans.FromFloat32(make([]float32, 6), 1, 3, 2)
	b, _ := scans.FromFloat32(make([]float32, 3), 1, 3, 1)
	_, err := dispatch.LinearScan(a, b, nil)
	fmt.Println(err)
	// Output: scans: linear_scan: argument b: want f32 (B,T,D) = (1,3,2), got f32(1,3,1)
}

// A Scanner with an explicit policy, whatever MINGRU_SCAN says.
func ExampleNew() {
	s, err := dispatch.New(dispatch.Eager)
	if err != nil {
		fmt.Println(err)
		return
	}
	lc, _ := scans.FromFloat32([]float32{-0.5}, 1, 1, 1)    // log_coeffs (B,T,D)
	lv, _ := scans.FromFloat32([]float32{0, -0.5}, 1, 2, 1) // log_values (B,T+1,D)
	h, _ := s.ParallelScanLog(lc, lv)                       // e^-0.5 * e^0 + e^-0.5
	fmt.Printf("%.4f\n", h.(*scans.Host).At(0))
	// Output: 1.2131
}

// A training step on one queue: the forward and the backward of a layer
// are enqueued into outputs allocated once, and the step waits once. On a
// GPU the tensors would come from that backend's Upload and stay there;
// here they are host tensors, which the queue runs at once.
func ExampleScanner_NewQueue() {
	s, err := dispatch.New(dispatch.Eager)
	if err != nil {
		fmt.Println(err)
		return
	}
	q, _ := s.NewQueue()
	a, _ := scans.FromFloat32([]float32{0.5, 0.5}, 1, 2, 1)
	x, _ := scans.FromFloat32([]float32{1, 1}, 1, 2, 1)
	dh, _ := scans.FromFloat32([]float32{0, 1}, 1, 2, 1)
	// The step's outputs, allocated once and reused by every step.
	h, _ := scans.NewHost(scans.F32, 1, 2, 1)
	da, _ := scans.NewHost(scans.F32, 1, 2, 1)
	db, _ := scans.NewHost(scans.F32, 1, 2, 1)
	for step := 0; step < 3; step++ {
		fwd := &scans.Call{Op: scans.OpLinearScan, Dir: scans.Forward,
			Args: []scans.Tensor{a, x, nil}, Out: []scans.Tensor{h}}
		if _, err := q.Run(fwd); err != nil {
			fmt.Println(err)
			return
		}
		bwd := &scans.Call{Op: scans.OpLinearScan, Dir: scans.Backward,
			Args: []scans.Tensor{a, x, nil, h, dh}, Out: []scans.Tensor{da, db, nil}}
		if _, err := q.Run(bwd); err != nil {
			fmt.Println(err)
			return
		}
		if err := q.Wait(); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(h.Float32s(), da.Float32s(), db.Float32s())
	// Output: [1 1.5] [0 1] [0.5 1]
}
