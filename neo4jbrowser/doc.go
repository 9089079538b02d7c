// Package neo4jbrowser is what colline gives Neo4j Browser, embedded in the colline binary: a style
// (colline.grass: captions table.column on columns, datasets and jobs told apart, relationship
// captions the role), the lineage queries (queries/*.cypher, run by cli's tests against real
// Neo4j) and a Browser guide that makes each query a runnable step (guide.html). `colline ui`
// serves the style and the guide (/neo4j/colline.grass, /neo4j/guide.html) for Browser to load:
// docs/browser.md says how a Neo4j is configured to load them at connect.
package neo4jbrowser
