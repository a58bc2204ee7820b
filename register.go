package scans

import (
	"slices"
	"sync"
)

// Registration is a backend made known with Register.
type Registration struct {
	Name string
	// Rank orders the backends: package dispatch makes them in increasing
	// rank, takes the one of rank 0 as the reference, and under
	// MINGRU_SCAN=auto tries the others in that order.
	Rank int
	New  func() Backend
}

var (
	registryMu sync.Mutex
	registry   []Registration
)

// Register makes a backend known to package dispatch, as database/sql
// drivers are: a backend package calls it from init, and a program that
// imports the package (dispatch imports eager, cuda and vk) can run on it.
// Registering a name twice panics, as a programming error.
func Register(name string, rank int, newBackend func() Backend) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.Name == name {
			panic("scans: Register called twice for backend " + name)
		}
	}
	registry = append(registry, Registration{Name: name, Rank: rank, New: newBackend})
}

// Registered lists the registered backends in increasing rank.
func Registered() []Registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(a, b Registration) int { return a.Rank - b.Rank })
	return out
}
