// Package guard is what each of colline's HTTP doors (the explorer, the OpenLineage intake, the
// admin server) puts between a network it does not trust and its handlers, so that no client can
// hold a door and no web page can turn a browser against one (docs/security.md):
//
//   - Server: an http.Server whose timeouts bound slow clients (headers and bodies dripped in) and
//     whose header size is capped;
//   - Limiter: at most Max requests handled at once; a request's body is read before it takes a
//     slot, so a client dripping its body holds none; the others wait briefly, then get 503 with
//     Retry-After;
//   - Hosts: the names a door answers to in the Host header (against DNS rebinding);
//   - CrossOrigin: refuses a browser's cross-origin request, reads included;
//   - Throttle: failed logins per client address;
//   - Equal: secrets compared in constant time.
//
// Each door checks Host, origin and credentials before it reads a body, and gives each request a
// deadline that reaches the work it starts (the Neo4j transaction, the Kafka acknowledgement).
package guard
