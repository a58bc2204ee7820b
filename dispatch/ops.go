package dispatch

import "github.com/mingru/scans"

// Run implements scans.Runner: it checks c (once), chooses a backend
// under the Scanner's policy, moves the arguments there when they live
// elsewhere, runs c and returns the results where the arguments live. The
// Scanner's typed methods (LinearScan, ..., GivensScanBackward, from its
// embedded scans.Typed) build the Call and run it here.
func (s *Scanner) Run(c *scans.Call) ([]scans.Tensor, error) {
	if c == nil {
		return nil, errNilCall
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return s.do(c)
}
