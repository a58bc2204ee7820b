package scans

// DeviceInfo describes one device a backend can run on.
type DeviceInfo struct {
	Backend string // "vulkan" or "cuda"
	// Index is the backend's number for the device: the Vulkan loader's
	// order, or the CUDA ordinal. A backend made for it takes it (vk.NewOn,
	// cuda.NewOn).
	Index    int
	Name     string
	Memory   int64 // device-local memory in bytes, 0 where unknown
	Software bool  // the device runs on the CPU (Mesa's lavapipe)
}

// DeviceLister is implemented by a GPU backend that can list the devices
// it can run on, without opening any.
type DeviceLister interface {
	Devices() ([]DeviceInfo, error)
}

// Owned is implemented by the tensors of a GPU backend: Owner is the
// backend instance that holds the tensor, where package dispatch runs
// every call that takes it.
type Owned interface {
	Owner() Backend
}
