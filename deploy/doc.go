// Package deploy holds the checks of what colline ships besides the Go binary: the Dockerfile, the
// Helm chart and its alert rules, and the Grafana dashboard. It is a separate module so that the
// libraries these checks use (Prometheus's rule parser and PromQL engine, the prometheus-operator
// types) stay out of the consumer's go.mod. Run it with `make chart-test`, which first fetches
// helm, kubeconform, hadolint and the Kubernetes JSON schemas into .cache (deploy/tools.sh).
package deploy
