package eager_test

import (
	"fmt"
	"math"

	"github.com/mingru/scans"
	"github.com/mingru/scans/eager"
)

// round3 rounds to 3 decimals and turns -0 into 0, for stable printing.
func round3(x float32) float64 { return math.Round(float64(x)*1000)/1000 + 0 }

// A linear scan over T = 4 steps of one channel: h_t = a_t*h_{t-1} + b_t
// with h_{-1} = 0.
func ExampleBackend_LinearScan() {
	be := eager.New()
	a, _ := scans.FromFloat32([]float32{0.5, 0.5, 0.5, 0.5}, 1, 4, 1) // (B,T,D)
	b, _ := scans.FromFloat32([]float32{1, 1, 1, 1}, 1, 4, 1)
	h, err := be.LinearScan(a, b, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.(*scans.Host).Float32s())
	// Output: [1 1.5 1.75 1.875]
}

// The backward returns the gradient of every input; dh0 is nil because h0
// was absent.
func ExampleBackend_LinearScanBackward() {
	be := eager.New()
	a, _ := scans.FromFloat32([]float32{0.5, 0.5, 0.5}, 1, 3, 1)
	b, _ := scans.FromFloat32([]float32{1, 1, 1}, 1, 3, 1)
	h, _ := be.LinearScan(a, b, nil)
	// The gradient of loss = h_2 (the last state).
	dh, _ := scans.FromFloat32([]float32{0, 0, 1}, 1, 3, 1)
	da, db, dh0, err := be.LinearScanBackward(a, b, nil, h, dh)
	if err != nil {
		panic(err)
	}
	fmt.Println("da:", da.(*scans.Host).Float32s())
	fmt.Println("db:", db.(*scans.Host).Float32s())
	fmt.Println("dh0 is nil:", dh0 == nil)
	// Output:
	// da: [0 0.5 1.5]
	// db: [0.25 0.5 1]
	// dh0 is nil: true
}

// parallel_scan_log takes logarithms and stays finite where the linear form
// would not: here every coefficient is exp(-60) and every value exp(80),
// so exp(log_values) * exp(-sum of log_coeffs) overflows float32 after two
// steps, while h stays near exp(80).
func ExampleBackend_ParallelScanLog() {
	be := eager.New()
	const T = 5
	lc := make([]float32, T)
	lv := make([]float32, T+1)
	for i := range lc {
		lc[i] = -60
	}
	for i := range lv {
		lv[i] = 80
	}
	logCoeffs, _ := scans.FromFloat32(lc, 1, T, 1)   // (B,T,D)
	logValues, _ := scans.FromFloat32(lv, 1, T+1, 1) // (B,T+1,D), [0] is log h_{-1}
	h, err := be.ParallelScanLog(logCoeffs, logValues)
	if err != nil {
		panic(err)
	}
	for _, v := range h.(*scans.Host).Float32s() {
		fmt.Printf("%.4g ", v)
	}
	fmt.Println()
	// Output: 5.541e+34 5.541e+34 5.541e+34 5.541e+34 5.541e+34
}

// A Givens scan with k = 2 is a rotation-and-decay recurrence: here each
// step turns the state by 90 degrees and halves it.
func ExampleBackend_GivensScan() {
	be := eager.New()
	const T = 3
	theta, _ := scans.FromFloat32([]float32{math.Pi / 2, math.Pi / 2, math.Pi / 2}, 1, T, 1, 1) // (B,T,N,k-1)
	sigma, _ := scans.FromFloat32([]float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1, T, 1, 2)          // (B,T,N,k)
	x, _ := scans.FromFloat32(make([]float32, T*2), 1, T, 1, 2)
	h0, _ := scans.FromFloat32([]float32{1, 0}, 1, 1, 2) // (B,N,k)
	h, err := be.GivensScan(theta, sigma, x, h0)
	if err != nil {
		panic(err)
	}
	v := h.(*scans.Host).Float32s()
	for t := 0; t < T; t++ {
		fmt.Printf("h_%d = (%g, %g)\n", t, round3(v[2*t]), round3(v[2*t+1]))
	}
	// Output:
	// h_0 = (0, 0.5)
	// h_1 = (-0.25, 0)
	// h_2 = (0, -0.125)
}

// matrix_affine_scan with 2x2 blocks acting on 2x1 states: A swaps the two
// components, X adds 1 to the first.
func ExampleBackend_MatrixAffineScan() {
	be := eager.New()
	A, _ := scans.FromFloat32([]float32{0, 1, 1, 0, 0, 1, 1, 0}, 1, 2, 1, 2, 2) // (B,T,N,k,k)
	X, _ := scans.FromFloat32([]float32{1, 0, 1, 0}, 1, 2, 1, 2, 1)             // (B,T,N,k,v)
	H, err := be.MatrixAffineScan(A, X, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(H.(*scans.Host).Float32s())
	// Output: [1 0 1 1]
}

// f16 and bf16 tensors are computed in float32 and rounded at the store.
func ExampleBackend_LinearScan_bf16() {
	be := eager.New()
	a, _ := scans.Convert(scans.BF16, []float32{0.9, 0.9, 0.9}, 1, 3, 1)
	b, _ := scans.Convert(scans.BF16, []float32{1, 1, 1}, 1, 3, 1)
	h, _ := be.LinearScan(a, b, nil)
	fmt.Println(h.DType(), h.(*scans.Host).Float32s())
	// Output: bf16 [1 1.8984375 2.703125]
}

// The generic kernels run on plain slices, in float32 or float64; a
// float64 run is a reference for the float32 backends.
func ExampleLinearForward() {
	d := scans.Dims{B: 1, T: 3, N: 2, K: 1, V: 1}
	a := []float64{0.5, 1, 0.5, 1, 0.5, 1} // (B,T,D), D = 2
	b := []float64{1, 1, 1, 1, 1, 1}
	h0 := []float64{2, 0} // (B,D)
	h := make([]float64, 6)
	eager.LinearForward(d, a, b, h0, h)
	fmt.Println(h)
	// Output: [2 1 2 2 2 3]
}
