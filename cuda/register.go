package cuda

import "github.com/mingru/scans"

func init() { scans.Register(backendName, 10, func() scans.Backend { return New() }) }
