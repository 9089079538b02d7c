// Package ui is the lineage explorer that `colline ui` serves: a web page (TypeScript in ui/web,
// built into an embedded bundle, see bundle.go) that draws a column's upstream or downstream as
// table boxes with column-to-column edges, and the JSON API it reads (/api/...), which reads the
// graph through the Reader interface (*graph.Reader: read transactions, parameters only). It also
// serves Neo4j Browser's style and guide (package neo4jbrowser) and /healthz, /readyz.
//
// Safe to expose (docs/security.md): optional authentication (Auth: basic, bearer token, a trusted
// proxy's header; failed logins throttled), TLS (Params.Server with a certificate), the Host names
// it answers to (Params.Hosts, against DNS rebinding), no cross-origin request to the API and JSON
// only in a POST (no CSRF), no write path to Neo4j, bounds on every request (package guard: slow
// clients, header and body size, requests at once; walk steps, columns and edges per answer; query
// time, which ends the Neo4j transactions and the analyzer call), a /readyz that names no
// internal address, and names from Spark treated as data everywhere (the page sets text, never
// markup; CSV cells cannot become formulas). The SQL panel's analyzer (Analyzer, colline analyze)
// is optional.
package ui
