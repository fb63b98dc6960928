// Command testimages builds nodelet's test container images and pushes them
// to the local test registry that hack/testenv.sh runs (127.0.0.1:5000).
//
// Images are assembled in memory with go-containerregistry (tar layers on
// empty.Image), for the host platform, with OCI media types. Each image
// carries a label holding a hash of its inputs (recipe version and input
// files); an image whose tags already carry the same hash is not rebuilt or
// pushed, so a warm run costs a few HTTP requests.
//
// The images: registry.k8s.io/pause:3.10 (pause/pause.c, static),
// docker.io/library/busybox:1.35 and :latest (busybox-static with every
// applet), and docker.io/nodelet/testserver:1.0 (hack/testserver built with
// CGO_ENABLED=0 at /testserver, its Entrypoint, plus /bin/busybox and the
// applets sh, cat, touch, sleep, echo and wget; its inputs are the server's
// Go sources, go.mod, busybox and the Go version).
//
// With -auth-registry (hack/testenv.sh's 127.0.0.1:5001, which requires
// HTTP basic auth) the private images of privateCatalog are pushed there as
// -auth-user with the password from $TESTIMAGES_AUTH_PASSWORD:
// private/busybox:1.35, the busybox image under a name only authenticated
// pulls resolve (image pull secret tests).
//
// With -k8s-module (hack/controlplane/k8s, hack/conformance.sh images) the
// images of conformanceCatalog are pushed too, under the names the upstream
// v1.37.1 conformance suite runs (registry.k8s.io/e2e-test-images/...):
// agnhost (upstream's Go program, built CGO_ENABLED=0 in that module, on
// busybox, -bash and -curl with its libraries, with agnhost's user, group and
// files), kitten (agnhost
// with its picture), nonewprivs (upstream's nnp, setuid), busybox (busybox
// with bash as /bin/sh, which keeps environment variables whose names are no
// shell identifiers), nginx (busybox httpd on :80) and pause:3.10.2.
//
// To add an image, add a recipe to catalog in catalog.go: its repository
// name, tags, the input files that should trigger a rebuild, and a build
// function returning a v1.Image (usually assemble of one layer made with
// tarLayer, e.g. a CGO_ENABLED=0 Go test server built into b.workdir).
//
// Usage:
//
//	testimages [-registry 127.0.0.1:5000] [-src hack/testimages] [-testserver-src SRC/../testserver]
//	           [-busybox /bin/busybox] [-auth-registry HOST:PORT -auth-user USER]
//	           [-k8s-module DIR [-bash /bin/bash-static] [-curl /usr/bin/curl]] [-force] [name...]
package main
