package dispatch

import "github.com/mingru/scans"

// The package-level functions run on Default(), the Scanner configured from
// MINGRU_SCAN. Each documents its operation on the Scanner method of the
// same name.

// LinearScan runs Scanner.LinearScan on Default().
func LinearScan(a, b, h0 scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.LinearScan(a, b, h0)
}

// LinearScanBackward runs Scanner.LinearScanBackward on Default().
func LinearScanBackward(a, b, h0, h, dh scans.Tensor) (da, db, dh0 scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, nil, err
	}
	return s.LinearScanBackward(a, b, h0, h, dh)
}

// MatrixScan runs Scanner.MatrixScan on Default().
func MatrixScan(A, b, h0 scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.MatrixScan(A, b, h0)
}

// MatrixScanBackward runs Scanner.MatrixScanBackward on Default().
func MatrixScanBackward(A, b, h0, h, dh scans.Tensor) (dA, db, dh0 scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, nil, err
	}
	return s.MatrixScanBackward(A, b, h0, h, dh)
}

// MatrixAffineScan runs Scanner.MatrixAffineScan on Default().
func MatrixAffineScan(A, X, H0 scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.MatrixAffineScan(A, X, H0)
}

// MatrixAffineScanBackward runs Scanner.MatrixAffineScanBackward on Default().
func MatrixAffineScanBackward(A, X, H0, H, dH scans.Tensor) (dA, dX, dH0 scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, nil, err
	}
	return s.MatrixAffineScanBackward(A, X, H0, H, dH)
}

// ParallelScanLog runs Scanner.ParallelScanLog on Default().
func ParallelScanLog(logCoeffs, logValues scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.ParallelScanLog(logCoeffs, logValues)
}

// ParallelScanLogBackward runs Scanner.ParallelScanLogBackward on Default().
func ParallelScanLogBackward(logCoeffs, logValues, h, dh scans.Tensor) (dLogCoeffs, dLogValues scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, err
	}
	return s.ParallelScanLogBackward(logCoeffs, logValues, h, dh)
}

// GivensScan runs Scanner.GivensScan on Default().
func GivensScan(theta, sigma, x, h0 scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.GivensScan(theta, sigma, x, h0)
}

// GivensScanBackward runs Scanner.GivensScanBackward on Default().
func GivensScanBackward(theta, sigma, x, h0, h, dh scans.Tensor) (dTheta, dSigma, dx, dh0 scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return s.GivensScanBackward(theta, sigma, x, h0, h, dh)
}

// MingruScan runs Scanner.MingruScan on Default().
func MingruScan(k, x, h0 scans.Tensor) (scans.Tensor, error) {
	s, err := Default()
	if err != nil {
		return nil, err
	}
	return s.MingruScan(k, x, h0)
}

// MingruScanBackward runs Scanner.MingruScanBackward on Default().
func MingruScanBackward(k, x, h0, h, dh scans.Tensor) (dk, dx, dh0 scans.Tensor, err error) {
	s, err := Default()
	if err != nil {
		return nil, nil, nil, err
	}
	return s.MingruScanBackward(k, x, h0, h, dh)
}
