package scans

// Runner runs described calls: a Backend, or package dispatch's Scanner.
type Runner interface {
	Run(c *Call) ([]Tensor, error)
}

// Typed gives a Runner the typed method of each operation: each builds the
// Call and runs it. Package dispatch's functions and Scanner use it;
// embedding it gives a Backend the same methods:
//
//	h, err := scans.Typed{Runner: b}.LinearScan(a, x, nil)
//
// Optional inputs (h0, H0) may be nil; the matching gradient is then nil
// too. Forward methods return the output; backward methods take the
// forward's inputs, its output and the output's gradient, and return the
// gradient of every input, in argument order.
type Typed struct{ Runner Runner }

func (t Typed) run(op Op, dir Direction, args ...Tensor) ([]Tensor, error) {
	out, err := t.Runner.Run(&Call{Op: op, Dir: dir, Args: args})
	if err != nil {
		return nil, err
	}
	for i, o := range out {
		if IsNil(o) {
			out[i] = nil // an absent gradient is a nil interface
		}
	}
	return out, nil
}

func (t Typed) one(op Op, args ...Tensor) (Tensor, error) {
	out, err := t.run(op, Forward, args...)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// LinearScan computes h_t = a_t * h_{t-1} + b_t elementwise over
// a (B,T,D), b (B,T,D) from h0 (B,D), or zeros when h0 is nil.
func (t Typed) LinearScan(a, b, h0 Tensor) (h Tensor, err error) {
	return t.one(OpLinearScan, a, b, h0)
}

// LinearScanBackward returns the gradients of LinearScan's inputs given
// its output h and the output's gradient dh. dh0 is nil when h0 is.
func (t Typed) LinearScanBackward(a, b, h0, h, dh Tensor) (da, db, dh0 Tensor, err error) {
	out, err := t.run(OpLinearScan, Backward, a, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixScan computes h_t = A_t h_{t-1} + b_t per 2x2 block over
// A (B,T,N,2,2), b (B,T,N,2) from h0 (B,N,2), or zeros when h0 is nil.
func (t Typed) MatrixScan(A, b, h0 Tensor) (h Tensor, err error) {
	return t.one(OpMatrixScan, A, b, h0)
}

// MatrixScanBackward returns the gradients of MatrixScan's inputs.
func (t Typed) MatrixScanBackward(A, b, h0, h, dh Tensor) (dA, db, dh0 Tensor, err error) {
	out, err := t.run(OpMatrixScan, Backward, A, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixAffineScan computes H_t = A_t H_{t-1} + X_t per block over
// A (B,T,N,k,k), X (B,T,N,k,v) from H0 (B,N,k,v), or zeros when H0 is nil.
func (t Typed) MatrixAffineScan(A, X, H0 Tensor) (H Tensor, err error) {
	return t.one(OpMatrixAffineScan, A, X, H0)
}

// MatrixAffineScanBackward returns the gradients of MatrixAffineScan's
// inputs.
func (t Typed) MatrixAffineScanBackward(A, X, H0, H, dH Tensor) (dA, dX, dH0 Tensor, err error) {
	out, err := t.run(OpMatrixAffineScan, Backward, A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// ParallelScanLog computes, in log space, h_t = exp(log_coeffs_t) h_{t-1} +
// exp(log_values_{t+1}) with h_{-1} = exp(log_values_0), over
// log_coeffs (B,T,D) and log_values (B,T+1,D); h is (B,T,D).
func (t Typed) ParallelScanLog(logCoeffs, logValues Tensor) (h Tensor, err error) {
	return t.one(OpParallelScanLog, logCoeffs, logValues)
}

// ParallelScanLogBackward returns the gradients of ParallelScanLog's
// inputs.
func (t Typed) ParallelScanLogBackward(logCoeffs, logValues, h, dh Tensor) (dLogCoeffs, dLogValues Tensor, err error) {
	out, err := t.run(OpParallelScanLog, Backward, logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// GivensScan computes h_t = sigma_t * R(theta_t) h_{t-1} + x_t per block of
// size k without materializing the kxk transition, over theta (B,T,N,k-1),
// sigma (B,T,N,k), x (B,T,N,k) from h0 (B,N,k), or zeros when h0 is nil.
func (t Typed) GivensScan(theta, sigma, x, h0 Tensor) (h Tensor, err error) {
	return t.one(OpGivensScan, theta, sigma, x, h0)
}

// GivensScanBackward returns the gradients of GivensScan's inputs.
func (t Typed) GivensScanBackward(theta, sigma, x, h0, h, dh Tensor) (dTheta, dSigma, dx, dh0 Tensor, err error) {
	out, err := t.run(OpGivensScan, Backward, theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}

// MingruScan runs a minGRU layer's whole recurrence from its two
// pre-activations k (B,T,D) and x (B,T,D):
//
//	z_t = sigmoid(k_t),  g(x) = x + 0.5 for x >= 0, sigmoid(x) for x < 0,
//	h_t = (1 - z_t) h_{t-1} + z_t g(x_t),  h_{-1} = h0 (zeros when nil),
//
// with the gates formed where k and x are loaded, never stored. It stays
// accurate for any k and x: a kernel takes the linear form only where
// every gate is a normal float, and SPEC's log-space recurrence
// elsewhere. h0 must be >= 0: a negative entry makes
// its lane of h NaN. h is (B,T,D).
func (t Typed) MingruScan(k, x, h0 Tensor) (h Tensor, err error) {
	return t.one(OpMingruScan, k, x, h0)
}

// MingruScanBackward returns the gradients of MingruScan's inputs from
// the forward's inputs, its output h and the output's gradient dh. dh0 is
// nil when h0 is. A lane whose h0 entry is negative has NaN gradients.
func (t Typed) MingruScanBackward(k, x, h0, h, dh Tensor) (dk, dx, dh0 Tensor, err error) {
	out, err := t.run(OpMingruScan, Backward, k, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}
