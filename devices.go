package scans

import "fmt"

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

// WrapBytes checks the element type and shape of a tensor that wraps a
// caller's memory (vk.Backend.WrapBuffer, cuda.Backend.Wrap) and returns
// the bytes its elements take; a bad one is an *ArgError of the operation
// "wrap" naming dtype or shape.
func WrapBytes(dt DType, shape []int) (int64, error) {
	if !dt.Valid() {
		return 0, &ArgError{Op: "wrap", Arg: "dtype", Want: "f32, f16 or bf16", Got: dt.String()}
	}
	n := int64(1)
	for _, s := range shape {
		if s < 1 {
			return 0, &ArgError{Op: "wrap", Arg: "shape", Want: "dimensions of at least 1", Got: fmt.Sprint(shape)}
		}
		n *= int64(s)
	}
	return n * int64(dt.Size()), nil
}
