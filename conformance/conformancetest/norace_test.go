//go:build !race

package conformancetest

const raceEnabled = false
