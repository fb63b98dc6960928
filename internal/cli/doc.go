// Package cli implements nodelet's operator commands, which talk to a running nodelet's local
// read-only API (internal/server, --server, default http://127.0.0.1:10255) the way kubectl
// talks to an API server:
//
//	nodelet version [-o json]
//	nodelet get pods [NAME...] [-n NAMESPACE | -A] [-o wide|json|yaml|name]
//	nodelet logs POD [-c CONTAINER] [-f] [-p] [--tail N] [--timestamps] [--since D | --since-time T] [--limit-bytes N] [-n NAMESPACE]
//	nodelet describe pod NAME... [-n NAMESPACE]
//	nodelet events [POD] [-n NAMESPACE | -A]
//
// `describe pod` prints `kubectl describe pod`'s layout (a port of k8s.io/kubectl/pkg/describe's
// describePod for what a node holds) with the pod's events; testdata/describe-pod.golden is the
// real kubectl's output for the same pod (make cligolden), which the test compares byte for byte.
//
// `events` prints `kubectl events`' columns (LAST SEEN with "(xN over D)", TYPE, REASON,
// OBJECT, MESSAGE), sorted by last seen, from GET /events.
//
// `get pods` prints kubectl's table: NAME READY STATUS RESTARTS AGE, NAMESPACE first with -A,
// and IP NODE NOMINATED NODE READINESS GATES after with -o wide, aligned with kubectl's
// tabwriter settings and sorted by namespace and name as the API server lists them. The
// columns are computed by printPod (podrow.go), a statement-for-statement port of kubectl's
// printPod (pkg/printers/internalversion): the STATUS reasons (Init:N/M, Init:Reason,
// PodInitializing, CrashLoopBackOff, Completed, Error, NotReady, Terminating...), RESTARTS
// with "(Xs ago)" and AGE in k8s.io/apimachinery's HumanDuration, measured with the injected
// clock. An empty listing prints kubectl's "No resources found in NS namespace." to errOut.
// -o json|yaml print one named pod as a Pod and otherwise a v1 List, keys sorted, as kubectl;
// -o name prints pod/NAME.
//
// `logs` finds POD in the namespace (default "default") with GET /pods, picks the container
// (-c; else the kubectl.kubernetes.io/default-container annotation; else the first container,
// saying on stderr `Defaulted container "app" out of: app, sidecar, setup (init)` as kubectl) and
// copies GET /containerLogs/NS/POD/CONTAINER to out as it arrives, so -f streams until the
// container exits or the context ends.
//
// Errors are printed as kubectl prints them ("error: ...", "Error from server (NotFound): pods
// \"x\" not found") and give exit code 1; a bad command line gives 2. IsCommand lets main
// dispatch `nodelet get|logs|events|version` before parsing the agent's flags.
//
// Reading order: cli.go, getpods.go, podrow.go, logs.go, events.go.
package cli
