package dispatch

import (
	"sync"

	"github.com/mingru/scans"
	// The backends register themselves (scans.Register) when imported;
	// this is the one place that names them.
	_ "github.com/mingru/scans/cuda"
	_ "github.com/mingru/scans/eager"
	_ "github.com/mingru/scans/vk"
)

var (
	backendsOnce sync.Once
	backends     []scans.Backend
)

// Backends returns the process's backends, the registered ones
// (scans.Registered) in rank order: eager first, then the GPU backends in
// the order Auto prefers them (CUDA, then Vulkan, then any other package
// that registered itself). Making them touches no driver; a backend
// initializes its device on first use.
func Backends() []scans.Backend {
	backendsOnce.Do(func() {
		for _, r := range scans.Registered() {
			backends = append(backends, r.New())
		}
	})
	return append([]scans.Backend(nil), backends...)
}

// Statuses reports, for each of Backends, whether it can run here and on
// which device, or why not. It initializes each backend's device.
func Statuses() []scans.Status {
	bs := Backends()
	out := make([]scans.Status, len(bs))
	var wg sync.WaitGroup
	for i, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = b.Status()
		}()
	}
	wg.Wait()
	return out
}

// Backend returns the process's backend with the given name ("eager",
// "cuda" or "vulkan"), or nil.
func Backend(name string) scans.Backend {
	for _, b := range Backends() {
		if b.Name() == name {
			return b
		}
	}
	return nil
}
