package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mingru/scans"
)

// Machine names where a result was produced; every report starts with it.
type Machine struct {
	Backends []scans.Status `json:"backends"` // each backend's status: device, driver and API version, or why it is missing
	Go       string         `json:"go"`       // Go version
	OS       string         `json:"os"`
	Arch     string         `json:"arch"`
	CPUs     int            `json:"cpus"`   // runtime.NumCPU
	Date     string         `json:"date"`   // UTC, RFC 3339
	Commit   string         `json:"commit"` // git rev-parse HEAD (+ "+dirty" when tracked files differ from it), or "unknown"
}

// ThisMachine describes the running machine with the given backend
// statuses.
func ThisMachine(statuses []scans.Status) Machine {
	return Machine{
		Backends: statuses,
		Go:       runtime.Version(),
		OS:       runtime.GOOS,
		Arch:     runtime.GOARCH,
		CPUs:     runtime.NumCPU(),
		Date:     time.Now().UTC().Format(time.RFC3339),
		Commit:   gitCommit(),
	}
}

// CommitEnv names an environment variable that supplies the commit, for a
// binary carried to another machine. The commit is, in order: this
// variable when set; the commit stamped at link time (buildCommit); the
// revision the Go toolchain stamped into the binary (go build in a
// checkout; "+dirty" when it had local changes); the commit of the git
// checkout the program runs in.
const CommitEnv = "MINGRU_SCANS_COMMIT"

// buildCommit is the commit a binary was built from where the build says
// so: scripts/build-gpu-bins.sh links its binaries with
// -ldflags "-X github.com/mingru/scans/bench.buildCommit=<commit>", so that
// a report written on another machine names it without the environment.
var buildCommit string

func gitCommit() string {
	if c := strings.TrimSpace(os.Getenv(CommitEnv)); c != "" {
		return c
	}
	if buildCommit != "" {
		return buildCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "+dirty"
			}
			return rev
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if c == "" {
		return "unknown"
	}
	if exec.Command("git", "diff", "--quiet", "HEAD").Run() != nil {
		c += "+dirty"
	}
	return c
}

// Markdown renders the machine as the header of a report.
func (m Machine) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| machine | |\n|---|---|\n")
	for _, s := range m.Backends {
		fmt.Fprintf(&b, "| backend %s | %s |\n", s.Backend, mdEscape(statusText(s)))
	}
	fmt.Fprintf(&b, "| Go | %s |\n| OS/arch | %s/%s, %d CPUs |\n| date (UTC) | %s |\n| commit | %s |\n",
		m.Go, m.OS, m.Arch, m.CPUs, m.Date, m.Commit)
	return b.String()
}

func statusText(s scans.Status) string {
	if !s.Available {
		return "not available: " + s.Reason
	}
	t := "available"
	if s.Device != "" {
		t += " on " + s.Device
	}
	if s.Driver != "" {
		t += " (" + s.Driver + ")"
	}
	if s.Notes != "" {
		t += "; " + s.Notes
	}
	return t
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
