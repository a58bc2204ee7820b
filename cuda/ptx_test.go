package cuda

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mingru/scans"
	"github.com/mingru/scans/bench"
	"github.com/mingru/scans/conformance/conformancetest"
	"github.com/mingru/scans/internal/angles"
)

// manifest is ptx/manifest.txt, parsed.
type manifest struct {
	nvcc    string
	flags   []string
	sources map[string]string // path -> sha256
	modules []manifestModule
}

type manifestModule struct {
	name, sum, source string
	defines           []string
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	b, err := ptxFS.ReadFile("ptx/manifest.txt")
	if err != nil {
		t.Fatalf("embedded manifest: %v", err)
	}
	m := manifest{sources: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "#") || len(f) == 0:
		case f[0] == "nvcc":
			m.nvcc = strings.TrimSpace(strings.TrimPrefix(line, "nvcc"))
		case f[0] == "flags":
			m.flags = f[1:]
		case f[0] == "source" && len(f) == 3:
			m.sources[f[2]] = f[1]
		case f[0] == "module" && len(f) >= 4:
			m.modules = append(m.modules, manifestModule{name: f[1], sum: f[2], source: f[3], defines: f[4:]})
		default:
			t.Fatalf("manifest: unexpected line %q", line)
		}
	}
	if m.nvcc == "" || len(m.sources) == 0 || len(m.modules) == 0 {
		t.Fatalf("manifest incomplete: %+v", m)
	}
	return m
}

// kernelsDir finds the kernel sources: "kernels" when the test runs in the
// package directory (go test), "cuda/kernels" when a test binary runs from
// the repository root. It skips the test when neither exists.
func kernelsDir(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{"kernels", filepath.Join("cuda", "kernels")} {
		if _, err := os.Stat(filepath.Join(dir, "linear_scan.cu")); err == nil {
			return dir
		}
	}
	t.Skip("kernel sources not found: run from the cuda package directory or the repository root")
	return ""
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestPTXFresh fails when the embedded PTX is stale: a kernel source
// changed, was added or removed since go generate, or a PTX file was
// edited by hand. It needs no GPU and no build tag.
func TestPTXFresh(t *testing.T) {
	m := readManifest(t)
	if !strings.Contains(m.nvcc, "release 11.8") {
		t.Errorf("manifest nvcc = %q, want CUDA 11.8's", m.nvcc)
	}
	dir := kernelsDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.cu*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range files {
		f := "kernels/" + filepath.Base(path)
		seen[f] = true
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := m.sources[f]
		switch {
		case !ok:
			t.Errorf("%s is not in ptx/manifest.txt: run go generate ./cuda", f)
		case want != sha(b):
			t.Errorf("%s changed since the PTX was generated: run go generate ./cuda", f)
		}
	}
	for f := range m.sources {
		if !seen[f] {
			t.Errorf("%s is in ptx/manifest.txt but gone: run go generate ./cuda", f)
		}
	}
	embedded, err := ptxFS.ReadDir("ptx")
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]bool{}
	for _, mod := range m.modules {
		mods[mod.name] = true
		b, err := ptxFS.ReadFile("ptx/" + mod.name + ".ptx")
		if err != nil {
			t.Errorf("module %s: %v", mod.name, err)
			continue
		}
		if sha(b) != mod.sum {
			t.Errorf("ptx/%s.ptx differs from what go generate wrote", mod.name)
		}
		if !bytes.Contains(b, []byte("// nvcc: "+m.nvcc+"\n")) {
			t.Errorf("ptx/%s.ptx does not record the nvcc version line %q", mod.name, m.nvcc)
		}
	}
	for _, e := range embedded {
		if n, ok := strings.CutSuffix(e.Name(), ".ptx"); ok && !mods[n] {
			t.Errorf("ptx/%s is not in the manifest", e.Name())
		}
	}
}

// TestPTXKernels checks that every kernel the backend can launch is
// exported by the module moduleOf names.
func TestPTXKernels(t *testing.T) {
	type key struct {
		op scans.Op
		d  scans.Dims
	}
	var all []key
	for _, op := range []scans.Op{scans.OpLinearScan, scans.OpParallelScanLog, scans.OpMingruScan} {
		all = append(all, key{op, scans.Dims{B: 1, T: 1, N: 1, K: 1, V: 1}})
	}
	all = append(all, key{scans.OpMatrixScan, scans.Dims{B: 1, T: 1, N: 1, K: 2, V: 1}})
	for _, k := range scans.Envelope {
		for _, v := range scans.Envelope {
			all = append(all, key{scans.OpMatrixAffineScan, scans.Dims{B: 1, T: 1, N: 1, K: k, V: v}})
		}
		if k > 1 {
			all = append(all, key{scans.OpGivensScan, scans.Dims{B: 1, T: 1, N: 1, K: k, V: 1}})
		}
	}
	n := 0
	for _, c := range all {
		for _, dt := range scans.DTypes {
			if err := envelope(c.op, c.d, dt); err != nil {
				t.Fatalf("%s %v: %v", c.op, c.d, err)
			}
			src, err := readPTX(moduleOf(c.op, c.d, dt))
			if err != nil {
				t.Fatal(err)
			}
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				names := []string{kernelName(c.op, dir, c.d, dt)}
				if c.op == scans.OpGivensScan {
					names = append(names, names[0]+"_chunked", names[0]+"_turn")
				}
				if elementwisePairs(c.op, dir, 2, dt) {
					names = append(names, names[0]+"_pairs")
				}
				for _, name := range names {
					if !strings.Contains(src, ".entry "+name+"(") {
						t.Errorf("module %s lacks kernel %s", moduleOf(c.op, c.d, dt), name)
					}
					n++
				}
			}
		}
	}
	src, err := readPTX(utilModule)
	if err != nil || !strings.Contains(src, ".entry "+emptyKernel+"(") {
		t.Errorf("module %s lacks %s (%v)", utilModule, emptyKernel, err)
	}
	// Every op, type and direction, the chunked Givens kernels, the
	// unchunked Givens kernels for a theta within pi, and the elementwise
	// 16-bit forwards with two channels per thread.
	if want := 2*3*(3+1+25+2*4) + 2*3*4 + 3*2; n != want {
		t.Errorf("checked %d kernels, want %d", n, want)
	}
	for _, e := range []string{".version 7.8", ".target sm_80"} {
		if !strings.Contains(src, e) {
			t.Errorf("PTX lacks %q", e)
		}
	}
}

// TestPTXRecompile recompiles every module with the installed nvcc, when
// it is CUDA 11.8's, and compares the bytes with the embedded PTX.
func TestPTXRecompile(t *testing.T) {
	if taggedBuild {
		t.Skip("the byte-for-byte check runs in the untagged build (TestPTXFresh checks the manifest here)")
	}
	m := readManifest(t)
	dir := kernelsDir(t)
	out, err := exec.Command("nvcc", "--version").CombinedOutput()
	if err != nil {
		t.Skipf("nvcc not available (%v): the byte-for-byte check needs CUDA 11.8's nvcc", err)
	}
	if !strings.Contains(string(out), m.nvcc) {
		t.Skipf("nvcc is not %q: the byte-for-byte check needs that exact compiler", m.nvcc)
	}
	mods := m.modules
	if testing.Short() {
		// One module of each kernel source, its smallest: the others
		// take most of the time, and the full tier recompiles them all.
		var some []manifestModule
		for _, mod := range mods {
			switch mod.name {
			case "linear_scan", "matrix_scan", "parallel_scan_log", "mingru_scan", "util",
				"matrix_affine_scan_f32_k2", "givens_scan_f32_k2":
				some = append(some, mod)
			}
		}
		mods = some
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].name < mods[j].name })
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, mod := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tmp := t.TempDir()
			args := append(append(append([]string{}, m.flags...), mod.defines...), "-o", filepath.Join(tmp, "out.ptx"), filepath.Join(dir, mod.source))
			if msg, err := exec.Command("nvcc", args...).CombinedOutput(); err != nil {
				t.Errorf("nvcc %s: %v\n%s", strings.Join(args, " "), err, msg)
				return
			}
			got, err := os.ReadFile(filepath.Join(tmp, "out.ptx"))
			if err != nil {
				t.Error(err)
				return
			}
			emb, err := ptxFS.ReadFile("ptx/" + mod.name + ".ptx")
			if err != nil {
				t.Error(err)
				return
			}
			// The embedded file is a three-line header, then nvcc's output.
			body := emb
			for i := 0; i < 3; i++ {
				if j := bytes.IndexByte(body, '\n'); j >= 0 {
					body = body[j+1:]
				}
			}
			if !bytes.Equal(body, got) {
				t.Errorf("ptx/%s.ptx differs from what nvcc compiles now: run go generate ./cuda", mod.name)
			}
		}()
	}
	wg.Wait()
}

// TestElementwisePlan: linear_scan's 16-bit forward at an even number of
// channels runs the _pairs kernel where its lanes take twice the chunks
// (the large shape), on tiles of 64 channels with shared memory for both
// channels' aggregates; at lab and long-T, whose few lanes already take
// the chunks their T allows, and in every other elementwise launch, one
// channel per thread.
func TestElementwisePlan(t *testing.T) {
	large := scans.Dims{B: 32, T: 4096, N: 1024, K: 1, V: 1}
	odd := scans.Dims{B: 32, T: 4096, N: 1023, K: 1, V: 1}
	lab := scans.Dims{B: 128, T: 64, N: 64, K: 1, V: 1}
	longT := scans.Dims{B: 16, T: 1024, N: 64, K: 1, V: 1}
	for _, c := range []struct {
		op    scans.Op
		dir   scans.Direction
		d     scans.Dims
		dt    scans.DType
		pairs bool
	}{
		{scans.OpLinearScan, scans.Forward, large, scans.F16, true},
		{scans.OpLinearScan, scans.Forward, large, scans.BF16, true},
		{scans.OpLinearScan, scans.Forward, large, scans.F32, false},
		{scans.OpLinearScan, scans.Forward, odd, scans.F16, false},
		{scans.OpLinearScan, scans.Forward, lab, scans.F16, false},
		{scans.OpLinearScan, scans.Forward, longT, scans.BF16, false},
		{scans.OpLinearScan, scans.Backward, large, scans.F16, false},
		{scans.OpParallelScanLog, scans.Forward, large, scans.BF16, true},
		{scans.OpParallelScanLog, scans.Forward, odd, scans.BF16, false},
		{scans.OpMingruScan, scans.Forward, large, scans.F16, true},
		{scans.OpMingruScan, scans.Backward, large, scans.F16, false},
	} {
		p := planFor(c.op, c.dir, c.d, c.dt, true, h200)
		ch := 1
		if c.pairs {
			ch = 2
		}
		lanes := c.d.B * ((c.d.N + tile*ch - 1) / (tile * ch))
		name := kernelName(c.op, c.dir, c.d, c.dt)
		if c.pairs {
			name += "_pairs"
		}
		if p.pairs != c.pairs || p.kernel() != name || p.grid != lanes || p.bx != tile ||
			p.shared != 2*p.by*tile*ch*4 {
			t.Errorf("%s %s %v %v: kernel %s, grid %d x (%d, %d), %d bytes shared; want %s, grid %d x (%d, C), %d bytes",
				c.op, c.dir, c.d, c.dt, p.kernel(), p.grid, p.bx, p.by, p.shared, name, lanes, tile, 2*p.by*tile*ch*4)
		}
	}
	// The large shape's 16-bit linear forward: 512 lanes of 64 channels
	// take 16 chunks, the threads the H200 keeps in flight; the f32
	// linear_scan kernels, 1024 lanes of 32 channels, 16 chunks both ways,
	// twice those threads (the 16-bit backward, one channel a thread, 8);
	// parallel_scan_log keeps its own rule (2 chunks forward in f32).
	for _, c := range []struct {
		op   scans.Op
		dir  scans.Direction
		dt   scans.DType
		want int
	}{
		{scans.OpLinearScan, scans.Forward, scans.F16, 16}, {scans.OpLinearScan, scans.Forward, scans.F32, 16},
		{scans.OpLinearScan, scans.Backward, scans.F32, 16}, {scans.OpLinearScan, scans.Backward, scans.F16, 8},
		{scans.OpParallelScanLog, scans.Forward, scans.F32, 2},
	} {
		if p := planFor(c.op, c.dir, large, c.dt, true, h200); p.by != c.want {
			t.Errorf("large %s %s %s: %d chunks, want %d", c.op, c.dir, c.dt, p.by, c.want)
		}
	}
}

func TestChunkCount(t *testing.T) {
	cases := []struct{ T, lanes, width, want int }{
		{1, 1, tile, 1},          // T too short to split
		{31, 1, tile, 1},         // below 2*minChunk
		{32, 1, tile, 2},         // exactly two chunks of 16
		{64, 256, tile, 4},       // lab linear: B=128, D=64
		{1024, 32, tile, 32},     // long-T linear: B=16, D=64
		{4096, 1024, tile, 8},    // large linear: B=32, D=1024
		{100000, 1, tile, 32},    // capped at 32 chunks (1024 threads)
		{4096, 1 << 20, tile, 2}, // lanes beyond the block slots: 2 chunks fill the SMs
		{4096, 16384, 1, 32},     // 1-wide lanes limited by block slots
		{64, 4096, 1, 4},         // T=64 allows 4 chunks of 16
		{4096, 4096, 8, 8},       // large matrix_affine_scan k=8, v=8
		{1024, 128, 16, 32},      // v=16: 16*32 = 512 threads
	}
	for _, c := range cases {
		got := chunkCount(c.T, minChunk, c.lanes, c.width, h200, nil)
		if got != c.want {
			t.Errorf("chunkCount(T=%d, lanes=%d, width=%d) = %d, want %d", c.T, c.lanes, c.width, got, c.want)
		}
		if got < 1 || got > maxChunks || got&(got-1) != 0 || got*c.width > 1024 {
			t.Errorf("chunkCount(T=%d, lanes=%d, width=%d) = %d: not a power of two in [1,32] within 1024 threads", c.T, c.lanes, c.width, got)
		}
	}
	// Shared memory limits the block forwards: k=v=16 takes 2 KiB a chunk.
	fits := func(c int) bool { return affineShared(16, 16, 1, c, false) <= maxShared }
	if got := chunkCount(100000, minChunk, 1, 16, h200, fits); got != 16 {
		t.Errorf("chunkCount(k=v=16) = %d, want 16 (32 KiB of 48)", got)
	}
	// The backward adds 4 KiB of step buffers a chunk: 6 KiB in all.
	fits = func(c int) bool { return affineShared(16, 16, 1, c, true) <= maxShared }
	if got := chunkCount(100000, minChunk, 1, 16, h200, fits); got != 8 {
		t.Errorf("chunkCount(k=v=16, backward) = %d, want 8 (48 KiB of 48)", got)
	}
	// matrix_scan: the f32 backward's blocks stay within its launch bound
	// (512 threads) where the 16-bit backward's take 1024; the forward's
	// chunks stop where its 64 registers a thread fill the SMs.
	long := scans.Dims{B: 2, T: 100000, N: 4224, K: 2, V: 1} // 264 tiles of 32
	for _, c := range []struct {
		dir  scans.Direction
		dt   scans.DType
		want int
	}{{scans.Forward, scans.F32, 512}, {scans.Backward, scans.F32, 512}, {scans.Backward, scans.BF16, 1024}} {
		if p := planFor(scans.OpMatrixScan, c.dir, long, c.dt, true, h200); p.bx*p.by != c.want || c.want > 1024 ||
			(c.dir == scans.Backward && c.want > msMaxThreadsBwd(c.dt)) {
			t.Errorf("matrix_scan %v %v, %v: blocks of %dx%d, want %d threads", c.dir, c.dt, long, p.bx, p.by, c.want)
		}
	}
	// parallel_scan_log's forward at the large shape: 2 chunks in f32 (8
	// MiB of inputs in flight), 2 in f16 and bf16 with two channels a
	// thread and the next segment loaded ahead; at long-T one channel a
	// thread and the 16 chunks its blocks hold; lab and the backward as
	// chunkCount gives.
	for _, c := range []struct {
		d     scans.Dims
		dir   scans.Direction
		dt    scans.DType
		c     int
		pairs bool
	}{
		{scans.Dims{B: 32, T: 4096, N: 1024, K: 1, V: 1}, scans.Forward, scans.F32, 2, false},
		{scans.Dims{B: 32, T: 4096, N: 1024, K: 1, V: 1}, scans.Forward, scans.BF16, 2, true},
		{scans.Dims{B: 16, T: 1024, N: 64, K: 1, V: 1}, scans.Forward, scans.F16, 16, false},
		{scans.Dims{B: 32, T: 4096, N: 1024, K: 1, V: 1}, scans.Backward, scans.F32, 8, false},
		{scans.Dims{B: 16, T: 1024, N: 64, K: 1, V: 1}, scans.Forward, scans.F32, 32, false},
		{scans.Dims{B: 128, T: 64, N: 64, K: 1, V: 1}, scans.Forward, scans.F16, 4, true},
	} {
		// mingru_scan runs on the same kernels, so it takes the same
		// launches, but for its f32 forward, which runs in linear_scan's
		// form and takes linear_scan's.
		for _, op := range []scans.Op{scans.OpParallelScanLog, scans.OpMingruScan} {
			want := c.c
			if op == scans.OpMingruScan && c.dir == scans.Forward && c.dt == scans.F32 {
				want = planFor(scans.OpLinearScan, c.dir, c.d, c.dt, false, h200).by
			}
			if p := planFor(op, c.dir, c.d, c.dt, false, h200); p.by != want || p.pairs != c.pairs {
				t.Errorf("%s %v %v %v: %d chunks, pairs %v; want %d, %v", op, c.dir, c.dt, c.d, p.by, p.pairs, want, c.pairs)
			}
		}
	}
	// matrix_scan at the benchmark shapes: tiles of at least 4 blocks and
	// chunks of 8 steps (the segment a thread holds), so long-T takes 4 x
	// 32 threads a block and lab holds its T = 64 in one segment.
	for _, c := range []struct {
		d    scans.Dims
		w, c int
	}{
		{scans.Dims{B: 16, T: 1024, N: 32, K: 2, V: 1}, 4, 32},
		{scans.Dims{B: 128, T: 64, N: 32, K: 2, V: 1}, 8, 8},
		{scans.Dims{B: 32, T: 4096, N: 512, K: 2, V: 1}, 32, 0}, // 8 forward, 16 backward
		{scans.Dims{B: 4096, T: 64, N: 1, K: 2, V: 1}, 1, 8},
		{scans.Dims{B: 1, T: 1000, N: 3, K: 2, V: 1}, 4, 32},
	} {
		for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
			for _, dt := range scans.DTypes {
				p := planFor(scans.OpMatrixScan, dir, c.d, dt, false, h200)
				want := c.c
				if want == 0 && dir == scans.Forward {
					want = 8
				} else if want == 0 {
					want = 16
				}
				if p.bx != c.w || p.by != want {
					t.Errorf("matrix_scan %v %v %v: tile %d, %d chunks; want %d, %d", dir, dt, c.d, p.bx, p.by, c.w, want)
				}
			}
		}
	}
	// v = 1 needs no step buffers; its aggregates scale with the tile.
	if got := affineShared(2, 1, 32, 1, true); got != 0 {
		t.Errorf("affineShared(k=2, v=1, w=32, c=1, backward) = %d, want 0", got)
	}
	if got := affineShared(2, 1, 32, 8, true); got != 4*8*32*6 {
		t.Errorf("affineShared(k=2, v=1, w=32, c=8, backward) = %d, want %d", got, 4*8*32*6)
	}
	// Tiles of lanes for v = 1: 32 wide when lanes are plentiful (large
	// matrix_scan, 32*512 lanes), narrower when few (lab 128*32, long-T 16*32).
	if got := affineTile(32, 512, h200); got != 32 {
		t.Errorf("affineTile(B=32, N=512) = %d, want 32", got)
	}
	if got := affineTile(16, 32, h200); got != 1 {
		t.Errorf("affineTile(B=16, N=32) = %d, want 1", got)
	}
	if got := affineTile(128, 32, h200); got != 8 {
		t.Errorf("affineTile(B=128, N=32) = %d, want 8", got)
	}
	// Never wider than the lanes of a batch row (Givens at lab: N = 8),
	// and down to one lane when N = 1 with plenty of rows.
	if got := affineTile(4096, 8, h200); got != 8 {
		t.Errorf("affineTile(B=4096, N=8) = %d, want 8", got)
	}
	if got := affineTile(4096, 1, h200); got != 1 {
		t.Errorf("affineTile(B=4096, N=1) = %d, want 1", got)
	}
	// Givens: whole warps of at most givensMaxThreads threads, one per
	// channel; at the large shape (32*128 lanes, k = 8) tiles of 8 lanes,
	// 512 blocks of 64 threads; at long-T (16*8 lanes) and lab (128*8)
	// one warp of 4 lanes per block, spread over the SMs.
	for _, c := range []struct{ b, n, k, want int }{
		{32, 128, 8, 8}, {16, 8, 8, 4}, {128, 8, 8, 4}, {1, 1, 2, 16}, {1, 1, 16, 2},
		{4096, 1024, 2, 64}, {4096, 1024, 16, 8}, {1, 3, 4, 8},
	} {
		w := givensTile(c.b, c.n, c.k, h200)
		if w != c.want || w*c.k%32 != 0 || w*c.k > givensMaxThreads {
			t.Errorf("givensTile(B=%d, N=%d, k=%d) = %d, want %d", c.b, c.n, c.k, w, c.want)
		}
	}
	// Givens chunks T only where its b*n*k threads are at most 1/64 of
	// the device's (4224 on an H200), into 8 to 32 chunks of at least 8
	// steps (16 above 1/128 of the device's, 2112 threads): not at the
	// large shape (32768 threads) nor lab (8192), 32 chunks at long-T
	// (1024 threads), 16 for k = 16 (a lane's k*C threads in one block),
	// 16 at 4096 threads and T = 256, none where fewer than 8 chunks would
	// fit T; the block of a lane's k*C threads (or of W lanes, to fill one
	// warp) stays within the chunked launch bound.
	for _, c := range []struct{ b, t, n, k, want int }{
		{32, 4096, 128, 8, 1}, {16, 1024, 8, 8, 32}, {128, 64, 8, 8, 1}, {32, 128, 8, 8, 16},
		{64, 1024, 8, 8, 32}, {64, 256, 8, 8, 16}, {64, 128, 8, 8, 8}, {64, 64, 8, 8, 1},
		{33, 1024, 8, 8, 32}, {33, 128, 8, 8, 16}, {34, 128, 8, 8, 8}, {66, 1024, 8, 8, 32},
		{67, 1024, 8, 8, 1}, {16, 1024, 8, 16, 16},
		{1, 100000, 1, 2, 32}, {1, 63, 1, 2, 1}, {1, 64, 1, 2, 8}, {1, 127, 1, 2, 8}, {1, 128, 1, 2, 16},
		{4096, 100000, 1024, 2, 1},
	} {
		got := givensChunks(c.b, c.t, c.n, c.k, h200)
		w := givensChunkTile(c.k, got)
		if got != c.want || w*c.k*got > givensChunkedMaxThreads || (got > 1 && w*c.k*got%32 != 0) {
			t.Errorf("givensChunks(B=%d, T=%d, N=%d, k=%d) = %d (tile %d), want %d", c.b, c.t, c.n, c.k, got, w, c.want)
		}
	}
	for k := 1; k <= 16; k *= 2 {
		w := 32
		fits := func(c int) bool { return affineShared(k, 1, w, c, true) <= maxShared && w*c <= affineMaxThreads(k, 1) }
		if c := chunkCount(100000, minChunk, 1, w, h200, fits); w*c > affineMaxThreads(k, 1) {
			t.Errorf("k=%d, v=1: %d chunks of %d lanes exceed the launch bound %d", k, c, w, affineMaxThreads(k, 1))
		}
	}
	for k := 1; k <= 16; k *= 2 {
		for v := 1; v <= 16; v *= 2 {
			want := !(k == 16 && v < 4)
			if affineChunkable(k, v) != want {
				t.Errorf("affineChunkable(%d, %d) = %v, want %v", k, v, !want, want)
			}
		}
	}
}

// TestGivensTurnPlan: the unchunked Givens forward and backward of a theta
// whose every angle lies within pi run the _turn kernels, and no other
// plan does; the
// conformance matrix's and the benchmark's angles (bench's Typical
// inputs, uniform in (-pi, pi)) are such a theta in every element type.
func TestGivensTurnPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(conformancetest.TestSeed(), 7))
	for _, dt := range scans.DTypes {
		d := scans.Dims{B: 3, T: 200, N: 5, K: 8, V: 1}
		in, err := bench.Inputs(scans.OpGivensScan, d, dt, bench.Typical, rng)
		if err != nil {
			t.Fatal(err)
		}
		if r := angles.Of(in.Args[0]); r != angles.Turn {
			t.Errorf("%v: the benchmark's theta is of class %d, want %d (within pi)", dt, r, angles.Turn)
		}
		for _, occ := range []occupancy{unchunkedOcc, h200} {
			for _, dir := range []scans.Direction{scans.Forward, scans.Backward} {
				for _, r := range []angles.Range{angles.Turn, angles.Reduce, angles.Any} {
					p := planFor(scans.OpGivensScan, dir, d, dt, true, occ)
					p.withTheta(r)
					want := p.by == 1 && r == angles.Turn
					if got := strings.HasSuffix(p.kernel(), "_turn"); got != want {
						t.Errorf("%v %s, %d chunks, class %d: kernel %s", dt, dir, p.by, r, p.kernel())
					}
				}
			}
		}
	}
}
