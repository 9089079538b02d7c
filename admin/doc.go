// Package admin serves the consumer's operational HTTP endpoints: Prometheus metrics on
// /metrics, liveness on /healthz and readiness on /readyz. It also registers colline_build_info.
package admin
