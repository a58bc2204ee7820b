package scans_test

import (
	"fmt"

	"github.com/mingru/scans"
)

// Tensors are dense and row-major; f16 and bf16 tensors hold their 16-bit
// patterns and widen to float32 exactly.
func ExampleConvert() {
	h, _ := scans.Convert(scans.BF16, []float32{1, 1.00390625, 3.14159}, 3)
	fmt.Println(h, h.Float32s())
	// Output: bf16(3) [1 1 3.140625]
}

func ExampleF16FromFloat32() {
	fmt.Printf("%#04x %#04x %#04x\n", scans.F16FromFloat32(1), scans.F16FromFloat32(65504), scans.F16FromFloat32(1e6))
	// Output: 0x3c00 0x7bff 0x7c00
}
