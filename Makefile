# nodelet — the two commands the README opens with are `make run` and `make test`.
SHELL := /bin/bash
BIN := bin/nodelet
TESTENV := hack/testenv.sh
TESTENV_DIR ?= /var/lib/nodelet-testenv
NODE_NAME ?= $(shell hostname | tr A-Z a-z)

.PHONY: run test build unit e2e lint fuzz testenv-up testenv-down clean

## run: install and start the test environment (containerd, registry, images), build nodelet, run it on examples/
run: testenv-up build
	$(BIN) --pod-manifest-path examples/ \
	  --container-runtime-endpoint unix://$(TESTENV_DIR)/containerd.sock \
	  --root-dir /var/lib/nodelet --hostname-override $(NODE_NAME) -v 2

## test: every check CI runs: gofmt, go vet, unit tests with -race, fuzzing, end-to-end tests on real parts
test:
	bash hack/test.sh

build:
	mkdir -p bin && go build -o $(BIN) ./cmd/nodelet

testenv-up:
	bash $(TESTENV) up

testenv-down:
	bash $(TESTENV) down

clean:
	rm -rf bin

## bench: measure nodelet on real parts (containerd + runc + CNI) against the raw CRI floor; writes docs/benchmarks.md
.PHONY: bench
bench:
	go run ./hack/bench --pods 1,30 --runs 3 --out docs/benchmarks.md
