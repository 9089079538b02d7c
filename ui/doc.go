// Package ui is the lineage explorer that `colline ui` serves: a web page (TypeScript in ui/web,
// built into an embedded bundle, see bundle.go) that draws a column's upstream or downstream as
// table boxes with column-to-column edges, and the JSON API it reads (/api/...), which reads the
// graph through the Reader interface (*graph.Reader: read transactions, parameters only). It also
// serves Neo4j Browser's style and guide (package neo4jbrowser) and /healthz, /readyz.
//
// Safe to expose: optional authentication (Auth: basic, bearer token, a trusted proxy's header),
// TLS (Params.Server with a certificate), no write path to Neo4j, bounds on every request (walk
// steps, columns and edges per answer, query time, body size, requests at once), and names from
// Spark treated as data everywhere (the page sets text, never markup; CSV cells cannot become
// formulas). The SQL panel's analyzer (Analyzer, colline analyze) is optional.
package ui
