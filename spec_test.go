package scans

import (
	"bytes"
	"os"
	"testing"
)

// TestSpecInStep: SPEC.md, the contract users read, is the shared
// contract the project is built to, byte for byte, where that copy is
// beside the repository (as it is for the project's developers and CI).
func TestSpecInStep(t *testing.T) {
	ours, err := os.ReadFile("SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := os.ReadFile("../shared/SPEC.md")
	if os.IsNotExist(err) {
		t.Skip("no ../shared/SPEC.md beside the repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, shared) {
		t.Error("SPEC.md differs from ../shared/SPEC.md: copy the shared contract into the repository")
	}
}
