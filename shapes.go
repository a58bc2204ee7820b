package scans

import (
	"fmt"
	"strings"
)

// Dims are the sizes of one scan call. Every operation is a batch of B
// independent lanes times N blocks, each block a kxv state scanned over T
// steps:
//
//	linear_scan, parallel_scan_log,
//	mingru_scan:                    N = D, K = 1, V = 1
//	matrix_scan:                    K = 2, V = 1
//	matrix_affine_scan:             K = k, V = v
//	givens_scan:                    K = k, V = 1
type Dims struct {
	B, T, N, K, V int
}

// Lanes is the number of independent recurrences, B*N.
func (d Dims) Lanes() int { return d.B * d.N }

// String formats the dims as "B=128 T=64 N=8 k=8 v=8".
func (d Dims) String() string {
	return fmt.Sprintf("B=%d T=%d N=%d k=%d v=%d", d.B, d.T, d.N, d.K, d.V)
}

// GivensAngles returns how many angles rotate the pairs (0,1), (2,3), ...
// (first layer) and the pairs (1,2), (3,4), ... (second layer) in a block
// of size k; they add up to k-1.
func GivensAngles(k int) (first, second int) { return k / 2, (k - 1) / 2 }

// arg is one argument of a call: its name, value, the names of its
// dimensions and the sizes they must have.
type arg struct {
	name     string
	t        Tensor
	dimNames string // e.g. "B,T,D"
	want     []int
	optional bool
}

func wantString(dt DType, names string, want []int) string {
	sizes := make([]string, len(want))
	for i, w := range want {
		sizes[i] = fmt.Sprint(w)
	}
	return fmt.Sprintf("%v (%s) = (%s)", dt, names, strings.Join(sizes, ","))
}

func gotString(t Tensor) string {
	if IsNil(t) {
		return "nil"
	}
	return ShapeString(t.DType(), t.Shape())
}

// rank checks that the leading argument has the given rank and dimensions
// >= 1, and returns its shape.
func leading(op Op, name, dimNames string, t Tensor) ([]int, error) {
	rank := strings.Count(dimNames, ",") + 1
	if IsNil(t) {
		return nil, &ArgError{Op: op, Arg: name, Want: "a tensor of shape (" + dimNames + ")", Got: "nil"}
	}
	s := t.Shape()
	if len(s) != rank {
		return nil, &ArgError{Op: op, Arg: name, Want: fmt.Sprintf("rank %d (%s)", rank, dimNames), Got: gotString(t)}
	}
	for i, n := range s {
		if n < 1 {
			dn := strings.Split(dimNames, ",")[i]
			return nil, &ArgError{Op: op, Arg: name, Want: fmt.Sprintf("(%s) with %s >= 1", dimNames, dn), Got: gotString(t)}
		}
	}
	if !t.DType().Valid() {
		return nil, &ArgError{Op: op, Arg: name, Want: "element type f32, f16 or bf16", Got: gotString(t)}
	}
	return s, nil
}

// checkArgs checks every argument against its wanted shape and the element
// type dt, and that all tensors live in one place.
func checkArgs(op Op, dt DType, args ...arg) error {
	loc := ""
	for _, a := range args {
		if IsNil(a.t) {
			if a.optional {
				continue
			}
			return &ArgError{Op: op, Arg: a.name, Want: wantString(dt, a.dimNames, a.want), Got: "nil"}
		}
		s := a.t.Shape()
		ok := len(s) == len(a.want) && a.t.DType() == dt
		for i := 0; ok && i < len(s); i++ {
			ok = s[i] == a.want[i]
		}
		if !ok {
			return &ArgError{Op: op, Arg: a.name, Want: wantString(dt, a.dimNames, a.want), Got: gotString(a.t)}
		}
		if loc == "" {
			loc = a.t.Location()
		} else if a.t.Location() != loc {
			return &ArgError{Op: op, Arg: a.name, Want: "a tensor on " + loc + " like the arguments before it", Got: gotString(a.t) + " on " + a.t.Location()}
		}
	}
	return nil
}

// CheckLinearScan validates linear_scan's inputs: a (B,T,D), b (B,T,D),
// h0 (B,D) or nil, one element type.
func CheckLinearScan(a, b, h0 Tensor) (Dims, error) {
	return checkLinear(a, b, h0, nil, nil, false)
}

// CheckLinearScanBackward validates linear_scan's backward inputs: the
// forward's inputs, h (B,T,D) and dh (B,T,D).
func CheckLinearScanBackward(a, b, h0, h, dh Tensor) (Dims, error) {
	return checkLinear(a, b, h0, h, dh, true)
}

func checkLinear(a, b, h0, h, dh Tensor, bwd bool) (Dims, error) {
	return checkPair(OpLinearScan, "a", "b", a, b, h0, h, dh, bwd)
}

// CheckMingruScan validates mingru_scan's inputs: k (B,T,D), x (B,T,D),
// h0 (B,D) or nil.
func CheckMingruScan(k, x, h0 Tensor) (Dims, error) {
	return checkPair(OpMingruScan, "k", "x", k, x, h0, nil, nil, false)
}

// CheckMingruScanBackward validates mingru_scan's backward inputs: the
// forward's inputs, h (B,T,D) and dh (B,T,D).
func CheckMingruScanBackward(k, x, h0, h, dh Tensor) (Dims, error) {
	return checkPair(OpMingruScan, "k", "x", k, x, h0, h, dh, true)
}

// checkPair checks an elementwise op of two (B,T,D) inputs named n1 and
// n2 and an optional h0 (B,D).
func checkPair(op Op, n1, n2 string, a, b, h0, h, dh Tensor, bwd bool) (Dims, error) {
	s, err := leading(op, n1, "B,T,D", a)
	if err != nil {
		return Dims{}, err
	}
	d := Dims{B: s[0], T: s[1], N: s[2], K: 1, V: 1}
	args := []arg{
		{n1, a, "B,T,D", s, false},
		{n2, b, "B,T,D", s, false},
		{"h0", h0, "B,D", []int{d.B, d.N}, true},
	}
	if bwd {
		args = append(args, arg{"h", h, "B,T,D", s, false}, arg{"dh", dh, "B,T,D", s, false})
	}
	return d, checkArgs(op, a.DType(), args...)
}

// CheckMatrixScan validates matrix_scan's inputs: A (B,T,N,2,2),
// b (B,T,N,2), h0 (B,N,2) or nil.
func CheckMatrixScan(A, b, h0 Tensor) (Dims, error) { return checkMatrix(A, b, h0, nil, nil, false) }

// CheckMatrixScanBackward validates matrix_scan's backward inputs: the
// forward's inputs, h (B,T,N,2) and dh (B,T,N,2).
func CheckMatrixScanBackward(A, b, h0, h, dh Tensor) (Dims, error) {
	return checkMatrix(A, b, h0, h, dh, true)
}

func checkMatrix(A, b, h0, h, dh Tensor, bwd bool) (Dims, error) {
	op := OpMatrixScan
	s, err := leading(op, "A", "B,T,N,2,2", A)
	if err != nil {
		return Dims{}, err
	}
	d := Dims{B: s[0], T: s[1], N: s[2], K: 2, V: 1}
	st := []int{d.B, d.T, d.N, 2}
	args := []arg{
		{"A", A, "B,T,N,2,2", []int{d.B, d.T, d.N, 2, 2}, false},
		{"b", b, "B,T,N,2", st, false},
		{"h0", h0, "B,N,2", []int{d.B, d.N, 2}, true},
	}
	if bwd {
		args = append(args, arg{"h", h, "B,T,N,2", st, false}, arg{"dh", dh, "B,T,N,2", st, false})
	}
	return d, checkArgs(op, A.DType(), args...)
}

// CheckMatrixAffineScan validates matrix_affine_scan's inputs:
// A (B,T,N,k,k), X (B,T,N,k,v), H0 (B,N,k,v) or nil.
func CheckMatrixAffineScan(A, X, H0 Tensor) (Dims, error) {
	return checkAffine(A, X, H0, nil, nil, false)
}

// CheckMatrixAffineScanBackward validates matrix_affine_scan's backward
// inputs: the forward's inputs, H (B,T,N,k,v) and dH (B,T,N,k,v).
func CheckMatrixAffineScanBackward(A, X, H0, H, dH Tensor) (Dims, error) {
	return checkAffine(A, X, H0, H, dH, true)
}

func checkAffine(A, X, H0, H, dH Tensor, bwd bool) (Dims, error) {
	op := OpMatrixAffineScan
	s, err := leading(op, "A", "B,T,N,k,k", A)
	if err != nil {
		return Dims{}, err
	}
	if s[3] != s[4] {
		return Dims{}, &ArgError{Op: op, Arg: "A", Want: "square blocks (B,T,N,k,k)", Got: gotString(A)}
	}
	xs, err := leading(op, "X", "B,T,N,k,v", X)
	if err != nil {
		return Dims{}, err
	}
	d := Dims{B: s[0], T: s[1], N: s[2], K: s[3], V: xs[4]}
	st := []int{d.B, d.T, d.N, d.K, d.V}
	args := []arg{
		{"A", A, "B,T,N,k,k", s, false},
		{"X", X, "B,T,N,k,v", st, false},
		{"H0", H0, "B,N,k,v", []int{d.B, d.N, d.K, d.V}, true},
	}
	if bwd {
		args = append(args, arg{"H", H, "B,T,N,k,v", st, false}, arg{"dH", dH, "B,T,N,k,v", st, false})
	}
	return d, checkArgs(op, A.DType(), args...)
}

// CheckParallelScanLog validates parallel_scan_log's inputs:
// log_coeffs (B,T,D) and log_values (B,T+1,D).
func CheckParallelScanLog(logCoeffs, logValues Tensor) (Dims, error) {
	return checkLog(logCoeffs, logValues, nil, nil, false)
}

// CheckParallelScanLogBackward validates parallel_scan_log's backward
// inputs: the forward's inputs, h (B,T,D) and dh (B,T,D).
func CheckParallelScanLogBackward(logCoeffs, logValues, h, dh Tensor) (Dims, error) {
	return checkLog(logCoeffs, logValues, h, dh, true)
}

func checkLog(lc, lv, h, dh Tensor, bwd bool) (Dims, error) {
	op := OpParallelScanLog
	s, err := leading(op, "log_coeffs", "B,T,D", lc)
	if err != nil {
		return Dims{}, err
	}
	d := Dims{B: s[0], T: s[1], N: s[2], K: 1, V: 1}
	args := []arg{
		{"log_coeffs", lc, "B,T,D", s, false},
		{"log_values", lv, "B,T+1,D", []int{d.B, d.T + 1, d.N}, false},
	}
	if bwd {
		args = append(args, arg{"h", h, "B,T,D", s, false}, arg{"dh", dh, "B,T,D", s, false})
	}
	return d, checkArgs(op, lc.DType(), args...)
}

// CheckGivensScan validates givens_scan's inputs: theta (B,T,N,k-1),
// sigma (B,T,N,k), x (B,T,N,k), h0 (B,N,k) or nil. The block size k comes
// from sigma and must be at least 2.
func CheckGivensScan(theta, sigma, x, h0 Tensor) (Dims, error) {
	return checkGivens(theta, sigma, x, h0, nil, nil, false)
}

// CheckGivensScanBackward validates givens_scan's backward inputs: the
// forward's inputs, h (B,T,N,k) and dh (B,T,N,k).
func CheckGivensScanBackward(theta, sigma, x, h0, h, dh Tensor) (Dims, error) {
	return checkGivens(theta, sigma, x, h0, h, dh, true)
}

func checkGivens(theta, sigma, x, h0, h, dh Tensor, bwd bool) (Dims, error) {
	op := OpGivensScan
	s, err := leading(op, "sigma", "B,T,N,k", sigma)
	if err != nil {
		return Dims{}, err
	}
	d := Dims{B: s[0], T: s[1], N: s[2], K: s[3], V: 1}
	if d.K < 2 {
		return Dims{}, &ArgError{Op: op, Arg: "sigma", Want: "(B,T,N,k) with k >= 2", Got: gotString(sigma)}
	}
	args := []arg{
		{"theta", theta, "B,T,N,k-1", []int{d.B, d.T, d.N, d.K - 1}, false},
		{"sigma", sigma, "B,T,N,k", s, false},
		{"x", x, "B,T,N,k", s, false},
		{"h0", h0, "B,N,k", []int{d.B, d.N, d.K}, true},
	}
	if bwd {
		args = append(args, arg{"h", h, "B,T,N,k", s, false}, arg{"dh", dh, "B,T,N,k", s, false})
	}
	return d, checkArgs(op, sigma.DType(), args...)
}
