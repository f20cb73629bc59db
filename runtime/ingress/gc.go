package ingress

import (
	"os"
	"runtime/debug"
)

// gatewayGCPercent is the gateway's GOGC. Its live heap is small (the
// route table, pooled connections and buffers) and almost everything a
// request allocates dies with it, so collecting at 4× the live heap
// instead of 2× halves the collector's CPU for a few MB more memory.
const gatewayGCPercent = 400

// TuneGC sets the gateway process's GC target unless GOGC is set; a
// GOMEMLIMIT, when set, still bounds memory. Call it once, from the
// gateway's main.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gatewayGCPercent)
	}
}
