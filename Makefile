# nodelet — the two commands the README opens with are `make run` and `make test`.
SHELL := /bin/bash
BIN := bin/nodelet
TESTENV := hack/testenv.sh
TESTENV_DIR ?= /var/lib/nodelet-testenv
NODE_NAME ?= $(shell hostname | tr A-Z a-z)

.PHONY: run test build testenv-up testenv-down clean deps-count

## run: install and start the test environment (containerd, registry, images), build nodelet, run it on examples/
## (--fail-cgroupv1=false: nodelet runs pods on cgroup v1 with the cgroupfs driver, as the test machines have)
run: testenv-up build
	$(BIN) --pod-manifest-path examples/ \
	  --container-runtime-endpoint unix://$(TESTENV_DIR)/containerd.sock \
	  --root-dir /var/lib/nodelet --hostname-override $(NODE_NAME) --fail-cgroupv1=false -v 2

## test: every check CI runs: gofmt, go vet, unit tests with -race, fuzzing, end-to-end tests on real parts
test:
	bash hack/test.sh

## build: the nodelet binary as it is shipped: static (no cgo, no libc mapped), no symbol table
## or DWARF (as upstream's release builds), paths trimmed. Every build of nodelet the tests,
## the bench and the VM run is this one (`make build BIN=path`).
build:
	mkdir -p $(dir $(BIN)) && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(BIN) ./cmd/nodelet

## featuregates: regenerate the upstream kubelet's feature gate table from k8s.io/kubernetes (hack/controlplane/k8s's version)
.PHONY: featuregates
featuregates:
	cd hack/controlplane/k8s && go run -ldflags "$$(bash ../../cluster.sh ldflags)" ../../featuregates/gen.go > ../../../internal/kubeletconfig/featuregates_table.go.tmp
	mv internal/kubeletconfig/featuregates_table.go.tmp internal/kubeletconfig/featuregates_table.go
	gofmt -w internal/kubeletconfig/featuregates_table.go

## cligolden: regenerate internal/cli/testdata/describe-pod.golden with the real kubectl describe (hack/controlplane/k8s's version)
.PHONY: cligolden
cligolden:
	cd hack/controlplane/k8s && go run ../../cligolden/gen.go ../../../internal/cli/testdata/describe-pod.json > ../../../internal/cli/testdata/describe-pod.golden.tmp
	mv internal/cli/testdata/describe-pod.golden.tmp internal/cli/testdata/describe-pod.golden

## install: install nodelet as a systemd service (/usr/local/bin/nodelet, nodelet.service, /etc/nodelet/config.yaml)
.PHONY: install
install: build
	bash hack/install.sh

## test-vm: the suite test/vm inside a systemd + cgroup v2 Debian VM under QEMU (part of `make test`)
.PHONY: test-vm
test-vm: testenv-up
	bash hack/vm.sh test

testenv-up:
	bash $(TESTENV) up

testenv-down:
	bash $(TESTENV) down

clean:
	rm -rf bin

## deps-count: how many packages nodelet's binary is built from (CI watches it grow)
deps-count:
	@set -o pipefail; go list -deps ./cmd/nodelet | wc -l

## bench: measure nodelet on real parts (containerd + runc + CNI) next to the upstream kubelet v1.37.1 and the raw CRI floor; writes docs/benchmarks.md
.PHONY: bench
bench:
	go run ./hack/bench --pods 1,30 --scale 100 --runs 3 --out docs/benchmarks.md

## bench-go: the Go benchmarks of the hot functions (ComputePodActions, PLEG diff, status generation, /pods...)
.PHONY: bench-go
bench-go:
	go test -run '^$$' -bench . -benchmem -count 1 $$(go list ./... | grep -v /test/e2e)

## Cluster mode: a real control plane (etcd, kube-apiserver, controller-manager, scheduler v1.37.1) from hack/cluster.sh.
CLUSTER := hack/cluster.sh
.PHONY: run-cluster cluster-up cluster-down cluster-status

## run-cluster: testenv and a local control plane up, build nodelet, run it as node $(NODE_NAME) of that cluster
run-cluster: testenv-up cluster-up build
	@set -euo pipefail; \
	node_kubeconfig=$$(bash $(CLUSTER) kubeconfig $(NODE_NAME)); \
	eval "$$(bash $(CLUSTER) env)"; \
	echo; \
	echo "Cluster API: $$APISERVER; node $(NODE_NAME) authenticates with $$node_kubeconfig"; \
	echo "To use kubectl, in another shell:"; \
	echo "  export KUBECONFIG=$$KUBECONFIG PATH=$$(dirname $$KUBECTL):\$$PATH"; \
	echo "  kubectl get nodes"; \
	echo; \
	unset KUBECONFIG; \
	exec $(BIN) --kubeconfig "$$node_kubeconfig" --pod-manifest-path examples/ \
	  --container-runtime-endpoint unix://$(TESTENV_DIR)/containerd.sock \
	  --root-dir /var/lib/nodelet --hostname-override $(NODE_NAME) --fail-cgroupv1=false -v 2

## cluster-up / cluster-down / cluster-status: the control plane alone (down keeps certificates and etcd data)
cluster-up:
	bash $(CLUSTER) up

cluster-down:
	bash $(CLUSTER) down

cluster-status:
	bash $(CLUSTER) status

## conformance: upstream v1.37.1's sig-node Conformance specs on a cluster whose only node is nodelet (~15 min warm; hack/conformance.sh)
.PHONY: conformance
conformance:
	bash hack/conformance.sh run

## chaos: the chaos suite (test/e2e/chaos_test.go: nodelet SIGKILLed 20 times during a burst of 30 pods, containerd
## SIGKILLed during a burst, the API server down 5 minutes; ~13 min), then its figures into docs/reliability.md
.PHONY: chaos
chaos:
	@mkdir -p bin; set -o pipefail; \
	go test -count=1 -timeout 30m -v -run '^TestChaos' ./test/e2e/ 2>&1 | tee bin/chaos.log; rc=$$?; \
	bash hack/chaos-figures.sh bin/chaos.log docs/reliability.md || [ $$rc -ne 0 ] || rc=1; \
	exit $$rc
