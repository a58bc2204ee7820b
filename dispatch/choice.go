package dispatch

import (
	"fmt"
	"strings"
)

// Choice is a value of MINGRU_SCAN.
type Choice string

// The values MINGRU_SCAN accepts.
const (
	Auto   Choice = "auto"
	Eager  Choice = "eager"
	CUDA   Choice = "cuda"
	Triton Choice = "triton" // an alias of CUDA
	Vulkan Choice = "vulkan"
)

// Choices lists every accepted value of MINGRU_SCAN.
var Choices = []Choice{Auto, Eager, CUDA, Triton, Vulkan}

// EnvVar is the environment variable that selects the backend.
const EnvVar = "MINGRU_SCAN"

// ParseChoice reads a MINGRU_SCAN value. The empty string means Auto;
// letter case and surrounding space are ignored. Any other value is an
// error that lists the valid ones.
func ParseChoice(s string) (Choice, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return Auto, nil
	}
	for _, c := range Choices {
		if string(c) == v {
			return c, nil
		}
	}
	names := make([]string, len(Choices))
	for i, c := range Choices {
		names[i] = string(c)
	}
	return "", fmt.Errorf("dispatch: %s=%q is not valid: want one of %s", EnvVar, s, strings.Join(names, ", "))
}

// backendName is the name of the backend a forced choice demands.
func (c Choice) backendName() string {
	if c == Triton {
		return string(CUDA)
	}
	return string(c)
}
