package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestKernelMirrors checks the host's copies of the kernels' constants,
// which the launch rules depend on, against the kernel sources and the
// ptxas report: a kernel edit that changes one fails here, not in a
// launch that is silently slower or out of bounds.
func TestKernelMirrors(t *testing.T) {
	for _, c := range []struct {
		file, name string
		host       int
	}{
		{"matrix_scan.cu", "MS_SEG", msSeg},
		{"elementwise.cuh", "SEG_LOG_FWD", segLogFwd},
		{"logscan.cuh", "LOG_FWD16_MAX_THREADS", logFwd16Max},
		{"logscan.cuh", "LOG_FWD16_PAIRS_MAX_THREADS", logFwd16PairsMax},
		{"elementwise.cuh", "TILE", tile},
		{"givens_scan.cu", "GIVENS_MAX_THREADS", givensMaxThreads},
		{"givens_scan.cu", "GIVENS_CHUNKED_MAX_THREADS", givensChunkedMaxThreads},
		{"affine.cuh", "AFFINE_RING_BYTES", affineRingBytes},
		{"givens_scan.cu", "GIVENS_STAGE_ROUND", givensStageRound},
	} {
		src, err := os.ReadFile(filepath.Join("kernels", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^#define ` + c.name + ` (\d+)\s*$`).FindSubmatch(src)
		if m == nil {
			t.Errorf("kernels/%s: no #define %s <number>", c.file, c.name)
			continue
		}
		if v, _ := strconv.Atoi(string(m[1])); v != c.host {
			t.Errorf("kernels/%s: %s is %d, the host's copy %d", c.file, c.name, v, c.host)
		}
	}
	// The matrix_scan forwards' chunk rule counts the threads an SM holds
	// at msFwdRegisters registers a thread.
	rep, err := os.ReadFile(filepath.Join("kernels", "ptxas-sm90.txt"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`Compiling entry function '(matrix_scan_fwd_\w+)'[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*Used (\d+) registers`)
	found := re.FindAllSubmatch(rep, -1)
	if len(found) != 3 {
		t.Fatalf("ptxas report: %d matrix_scan forwards, want 3 (f32, f16, bf16)", len(found))
	}
	for _, f := range found {
		if r, _ := strconv.Atoi(string(f[2])); r != msFwdRegisters {
			t.Errorf("%s takes %d registers a thread; the chunk rule counts %d", f[1], r, msFwdRegisters)
		}
	}
}
