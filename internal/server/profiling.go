package server

import (
	"net/http"
	"net/http/pprof"
)

// installProfiling serves Go's profiles under /debug/pprof/, as upstream's
// enableProfilingHandler does with k8s.io/apiserver's routes.Profiling: the index and the named
// profiles (heap, goroutine, allocs, block, mutex, threadcreate), a CPU profile
// (/debug/pprof/profile?seconds=N), an execution trace, the command line and symbols.
// net/http/pprof's handlers are used as they are; its init also registers them on
// http.DefaultServeMux, which nodelet never serves.
func installProfiling(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
