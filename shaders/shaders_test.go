package shaders

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSourcesMatchManifest fails when a shader source changed (or was added
// or removed) since the embedded modules were generated. It needs no
// compiler, so it runs everywhere.
func TestSourcesMatchManifest(t *testing.T) {
	var sources []string
	for _, pat := range []string{"*.comp", "*.glsl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, m...)
	}
	sort.Strings(sources)
	if len(sources) == 0 {
		t.Fatal("no shader sources found next to the test")
	}
	seen := map[string]bool{}
	for _, src := range sources {
		seen[src] = true
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want, ok := sourceDigests[src]
		switch {
		case !ok:
			t.Errorf("%s is not in the generated manifest: run go generate ./shaders", src)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s changed since generation: run go generate ./shaders", src)
		}
	}
	for src := range sourceDigests {
		if !seen[src] {
			t.Errorf("%s is in the generated manifest but no longer exists: run go generate ./shaders", src)
		}
	}
}

// TestEmbeddedModulesAreFresh recompiles every module with the installed
// glslc and compares the bytes with the embedded SPIR-V.
func TestEmbeddedModulesAreFresh(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		t.Skip("glslc is not installed; the source manifest test still guards the sources")
	}
	ver, err := exec.Command("glslc", "--version").Output()
	if err != nil {
		t.Fatalf("glslc --version: %v", err)
	}
	if v := strings.TrimSpace(string(ver)); v != GlslcVersion {
		t.Errorf("installed glslc differs from the one that generated the modules:\n%s\nvs recorded\n%s", v, GlslcVersion)
	}
	dir := t.TempDir()
	for _, m := range modules {
		args := append(append([]string(nil), glslcFlags...), m.Flags...)
		for _, d := range m.Defines {
			args = append(args, "-D"+d)
		}
		out := filepath.Join(dir, m.Name+".spv")
		args = append(args, m.Source, "-o", out)
		if msg, err := exec.Command("glslc", args...).CombinedOutput(); err != nil {
			t.Errorf("glslc %s: %v\n%s", strings.Join(args, " "), err, msg)
			continue
		}
		fresh, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := SPIRV(m.Name)
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if !bytes.Equal(fresh, embedded) {
			t.Errorf("%s: embedded SPIR-V is stale (%d bytes, fresh %d): run go generate ./shaders", m.Name, len(embedded), len(fresh))
		}
	}
	t.Logf("%d modules match glslc output", len(modules))
}

func TestEveryModuleIsEmbedded(t *testing.T) {
	entries, err := spv.ReadDir("spv")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(modules) {
		t.Errorf("%d embedded files, %d modules listed", len(entries), len(modules))
	}
	for _, name := range Modules() {
		b, err := SPIRV(name)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(b) < 20 || b[0] != 0x03 || b[1] != 0x02 || b[2] != 0x23 || b[3] != 0x07 {
			t.Errorf("%s: not a SPIR-V module (bad magic)", name)
		}
	}
	if _, err := SPIRV("no_such_module"); err == nil {
		t.Error("SPIRV of a missing module returned no error")
	}
}
