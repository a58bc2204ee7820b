package dispatch

import "github.com/mingru/scans"

// LinearScan computes h_t = a_t * h_{t-1} + b_t elementwise over
// a (B,T,D), b (B,T,D) from h0 (B,D), or zeros when h0 is nil.
func (s *Scanner) LinearScan(a, b, h0 scans.Tensor) (h scans.Tensor, err error) {
	d, err := scans.CheckLinearScan(a, b, h0)
	if err != nil {
		return nil, err
	}
	out, err := s.do(&call{scans.OpLinearScan, d, []scans.Tensor{a, b, h0},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			h, err := be.LinearScan(in[0], in[1], in[2])
			return []scans.Tensor{h}, err
		}})
	return first(out, err)
}

// LinearScanBackward returns the gradients of LinearScan's inputs given
// its output h and the output's gradient dh. dh0 is nil when h0 is.
func (s *Scanner) LinearScanBackward(a, b, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	d, err := scans.CheckLinearScanBackward(a, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := s.do(&call{scans.OpLinearScan, d, []scans.Tensor{a, b, h0, h, dh},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			x, y, z, err := be.LinearScanBackward(in[0], in[1], in[2], in[3], in[4])
			return []scans.Tensor{x, y, z}, err
		}})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixScan computes h_t = A_t h_{t-1} + b_t per 2x2 block over
// A (B,T,N,2,2), b (B,T,N,2) from h0 (B,N,2), or zeros when h0 is nil.
func (s *Scanner) MatrixScan(A, b, h0 scans.Tensor) (h scans.Tensor, err error) {
	d, err := scans.CheckMatrixScan(A, b, h0)
	if err != nil {
		return nil, err
	}
	out, err := s.do(&call{scans.OpMatrixScan, d, []scans.Tensor{A, b, h0},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			h, err := be.MatrixScan(in[0], in[1], in[2])
			return []scans.Tensor{h}, err
		}})
	return first(out, err)
}

// MatrixScanBackward returns the gradients of MatrixScan's inputs.
func (s *Scanner) MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	d, err := scans.CheckMatrixScanBackward(A, b, h0, h, dh)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := s.do(&call{scans.OpMatrixScan, d, []scans.Tensor{A, b, h0, h, dh},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			x, y, z, err := be.MatrixScanBackward(in[0], in[1], in[2], in[3], in[4])
			return []scans.Tensor{x, y, z}, err
		}})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// MatrixAffineScan computes H_t = A_t H_{t-1} + X_t per block over
// A (B,T,N,k,k), X (B,T,N,k,v) from H0 (B,N,k,v), or zeros when H0 is nil.
func (s *Scanner) MatrixAffineScan(A, X, H0 scans.Tensor) (H scans.Tensor, err error) {
	d, err := scans.CheckMatrixAffineScan(A, X, H0)
	if err != nil {
		return nil, err
	}
	out, err := s.do(&call{scans.OpMatrixAffineScan, d, []scans.Tensor{A, X, H0},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			h, err := be.MatrixAffineScan(in[0], in[1], in[2])
			return []scans.Tensor{h}, err
		}})
	return first(out, err)
}

// MatrixAffineScanBackward returns the gradients of MatrixAffineScan's inputs.
func (s *Scanner) MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	d, err := scans.CheckMatrixAffineScanBackward(A, X, H0, H, dH)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := s.do(&call{scans.OpMatrixAffineScan, d, []scans.Tensor{A, X, H0, H, dH},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			x, y, z, err := be.MatrixAffineScanBackward(in[0], in[1], in[2], in[3], in[4])
			return []scans.Tensor{x, y, z}, err
		}})
	if err != nil {
		return nil, nil, nil, err
	}
	return out[0], out[1], out[2], nil
}

// ParallelScanLog computes, in log space, h_t = exp(log_coeffs_t) h_{t-1} +
// exp(log_values_{t+1}) with h_{-1} = exp(log_values_0), over
// log_coeffs (B,T,D) and log_values (B,T+1,D); h is (B,T,D).
func (s *Scanner) ParallelScanLog(logCoeffs, logValues scans.Tensor) (h scans.Tensor, err error) {
	d, err := scans.CheckParallelScanLog(logCoeffs, logValues)
	if err != nil {
		return nil, err
	}
	out, err := s.do(&call{scans.OpParallelScanLog, d, []scans.Tensor{logCoeffs, logValues},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			h, err := be.ParallelScanLog(in[0], in[1])
			return []scans.Tensor{h}, err
		}})
	return first(out, err)
}

// ParallelScanLogBackward returns the gradients of ParallelScanLog's inputs.
func (s *Scanner) ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	d, err := scans.CheckParallelScanLogBackward(logCoeffs, logValues, h, dh)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.do(&call{scans.OpParallelScanLog, d, []scans.Tensor{logCoeffs, logValues, h, dh},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			x, y, err := be.ParallelScanLogBackward(in[0], in[1], in[2], in[3])
			return []scans.Tensor{x, y}, err
		}})
	if err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// GivensScan computes h_t = sigma_t * R(theta_t) h_{t-1} + x_t per block of
// size k without materializing the kxk transition, over theta (B,T,N,k-1),
// sigma (B,T,N,k), x (B,T,N,k) from h0 (B,N,k), or zeros when h0 is nil.
func (s *Scanner) GivensScan(theta, sigma, x, h0 scans.Tensor) (h scans.Tensor, err error) {
	d, err := scans.CheckGivensScan(theta, sigma, x, h0)
	if err != nil {
		return nil, err
	}
	out, err := s.do(&call{scans.OpGivensScan, d, []scans.Tensor{theta, sigma, x, h0},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			h, err := be.GivensScan(in[0], in[1], in[2], in[3])
			return []scans.Tensor{h}, err
		}})
	return first(out, err)
}

// GivensScanBackward returns the gradients of GivensScan's inputs.
func (s *Scanner) GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	d, err := scans.CheckGivensScanBackward(theta, sigma, x, h0, h, dh)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	out, err := s.do(&call{scans.OpGivensScan, d, []scans.Tensor{theta, sigma, x, h0, h, dh},
		func(be scans.Backend, in []scans.Tensor) ([]scans.Tensor, error) {
			w, x, y, z, err := be.GivensScanBackward(in[0], in[1], in[2], in[3], in[4], in[5])
			return []scans.Tensor{w, x, y, z}, err
		}})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return out[0], out[1], out[2], out[3], nil
}

func first(out []scans.Tensor, err error) (scans.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
