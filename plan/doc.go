// Package plan turns a decoded event's plan into column lineage: it resolves every output column
// through exprIds down to the source columns it comes from, with a transformation type. It is pure:
// no I/O, no globals, deterministic output.
package plan
