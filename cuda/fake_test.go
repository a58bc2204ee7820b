//go:build cuda

package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFakeDriver runs the GPU tests of this binary again in a child
// process whose libcuda.so.1 is testdata/emu/fakecuda.cc: a stand-in
// driver that keeps "device" memory on the host, checks every copy and
// free against its allocations, and runs the kernels in the host
// emulation. It exercises the whole backend (driver calls, the device
// lock, launch parameters, poisoning, memory accounting, queues) on a machine
// without a GPU. Where a GPU is present the tests run on it instead, and
// this one skips.
func TestFakeDriver(t *testing.T) {
	if st, ok := gpuStatus(); ok {
		t.Skipf("a CUDA device is present (%s): the GPU tests run on it", st)
	}
	dir := kernelsDir(t)
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skipf("the stand-in driver needs g++: %v", err)
	}
	trackSources(t, dir)
	lib := t.TempDir()
	src := filepath.Join(filepath.Dir(dir), "testdata", "emu", "fakecuda.cc")
	args := []string{"-std=c++20", "-O1", "-pthread", "-shared", "-fPIC"}
	// Find cuda.h where cgo found it.
	for _, f := range strings.Fields(os.Getenv("CGO_CFLAGS")) {
		if strings.HasPrefix(f, "-I") {
			args = append(args, f)
		}
	}
	args = append(args, "-o", filepath.Join(lib, "libcuda.so.1"), src)
	if out, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("g++ %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	run := "^(TestStatus|TestSweep|TestConformance|TestChunkedElementwise|TestInstrumented|TestConcurrent|TestExecution|TestClose|TestDevices|TestWrap|TestWrapOn|TestInstances)$"
	// The quick matrix: every path of every kernel; the full matrix adds
	// shapes and runs on the GPU.
	cargs := []string{"-test.run", run, "-test.v", "-test.short"}
	cmd := exec.Command(os.Args[0], cargs...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib+":"+os.Getenv("LD_LIBRARY_PATH"))
	out, err := cmd.CombinedOutput()
	text := string(out)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "--- ") || strings.Contains(line, "conformance:") || strings.Contains(line, "FAIL") {
			t.Log(line)
		}
	}
	if err != nil {
		t.Fatalf("tests on the stand-in driver failed: %v\n%s", err, text)
	}
	for _, want := range []string{"--- PASS: TestConformance", "--- PASS: TestChunkedElementwise",
		"--- PASS: TestInstrumented", "--- PASS: TestSweep", "--- PASS: TestConcurrent", "--- PASS: TestExecution", "--- PASS: TestClose", "--- PASS: TestDevices", "--- PASS: TestWrap", "--- PASS: TestWrapOn", "--- PASS: TestInstances",
		"fake libcuda.so.1"} {
		if !strings.Contains(text, want) {
			t.Errorf("child output lacks %q: a test skipped or did not run\n%s", want, text)
		}
	}
}
