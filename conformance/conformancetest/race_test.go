//go:build race

package conformancetest

// raceEnabled trims the conformance run of eager to the quick matrix
// under the race detector, which slows the scans about tenfold.
const raceEnabled = true
