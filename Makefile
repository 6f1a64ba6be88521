# healthprobe-operator — see README.md.
SHELL := /bin/bash
NPM_STAMP := node_modules/.package-lock.json

.PHONY: all test unit go-test typecheck lint demo crds build image bench e2e e2e-local e2e-real-node test-real integration-real control-plane clean deps

all: test

$(NPM_STAMP): package.json package-lock.json
	npm ci
	@touch $(NPM_STAMP)

deps: $(NPM_STAMP)

typecheck: deps
	npx tsc --noEmit -p tsconfig.json

## Prettier (print width 120; .prettierignore limits it to the TypeScript and JavaScript of operator/,
## test/, hack/ and the root config files), eslint, then no operator source file over 400 lines and
## no function over 80 on the formatted source (hack/check-sizes.ts). `npm run format` rewrites.
lint: deps
	npx prettier --check .
	npx eslint .
	npx tsx hack/check-sizes.ts

## The Go tests of the test images (hack/images: the workload server's switching).
go-test:
	cd hack/images && GOWORK=off go test ./...

unit: deps
	env -u HEALTHPROBE_TEST_CLUSTER npm test --silent

## Installs dependencies when missing, then typecheck, lint and every test: all suites on the API
## test server, then the conformance and e2e suites on the real control plane, then the real node.
test: deps typecheck lint unit go-test e2e-local test-real

## The operator on the embedded API test server with demo pods on loopback and a live view.
demo: deps
	npx tsx hack/demo/main.ts $(ARGS)

## Regenerates crds/ from the one zod schema.
crds: deps
	npx tsx hack/generate-crds.ts

build: deps
	npx tsc -p tsconfig.build.json

## The operator image, named as the chart expects: the chart's image.repository and appVersion.
## IMAGE=registry.example.com/team/healthprobe-operator:0.1.0 names it for your own registry.
CHART := charts/healthprobe-operator
IMAGE ?= $(shell sed -n 's/^  repository: *//p' $(CHART)/values.yaml):$(shell sed -n 's/^appVersion: *"*\([^"]*\)"*/\1/p' $(CHART)/Chart.yaml)
## Without a docker or podman that answers (a docker client alone is not enough), buildah builds the
## same Dockerfile on base images made from the local Node (hack/images/build-operator.sh) and writes
## .scratch/images/operator.tar, for `kind load image-archive` or `ctr images import`.
CONTAINER_ENGINE ?= $(shell for e in docker podman; do command -v $$e >/dev/null && $$e info >/dev/null 2>&1 && { command -v $$e; break; }; done)
image:
	@if [ -n "$(CONTAINER_ENGINE)" ]; then $(CONTAINER_ENGINE) build -t $(IMAGE) .; \
	elif command -v buildah >/dev/null; then bash hack/images/build-operator.sh $(IMAGE); \
	else echo "make image: no docker or podman engine answers and buildah is not on PATH; install one, or build the Dockerfile with any OCI builder as $(IMAGE)" >&2; exit 1; fi

bench: deps
	npx tsx test/bench/main.ts all

## The e2e suite against whatever KUBECONFIG points at (a kind cluster, or the API test server when unset).
e2e: deps
	node --experimental-vm-modules node_modules/jest/bin/jest.js --testPathIgnorePatterns '/node_modules/' --roots test/e2e

## The e2e suite on the API test server whatever the environment says, as part of make test.
e2e-local: deps
	env -u KUBECONFIG node --experimental-vm-modules node_modules/jest/bin/jest.js --testPathIgnorePatterns '/node_modules/' --roots test/e2e

## The conformance and e2e suites on the real control plane, built from Go modules on first use,
## then test/real-node: a real kubelet, kube-proxy and containerd, and the operator's image
## installed by helm (needs Go, root, iproute2 and the node packages .ci/run installs; says loudly
## what did not run without them).
test-real: deps
	bash hack/control-plane/test-real.sh

## The integration suites on the real control plane, the audit log read as the request log (needs Go,
## root and iproute2; not part of make test, which runs them on the API test server: about 16 minutes).
integration-real: deps
	bash hack/control-plane/integration-real.sh

## The e2e suite on the real node: the operator's own image installed by helm, pods of the
## workload image, a real kubelet and kube-proxy (needs what test-real needs; about 11 minutes).
e2e-real-node: deps
	bash hack/control-plane/e2e-real-node.sh

## Builds (or finds in its cache) kube-apiserver, kube-controller-manager and etcd.
control-plane:
	bash hack/control-plane/build.sh

clean:
	rm -rf dist .scratch coverage
