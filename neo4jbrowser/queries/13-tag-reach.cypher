// colline 13: where a tag goes: each column its value reaches through DIRECT flows, unmasked, aggregated or masked (where it stops)
// :param tag => 'pii'
MATCH (r:TagRule {tag: $tag})
CALL (r) {
  MATCH (c:Column {key: r.columnKey}) RETURN c
  UNION
  MATCH (d:Dataset) WHERE r:TagPattern AND d.key STARTS WITH r.datasetPrefix AND d.key =~ r.datasetRegex
  MATCH (d)-[:HAS_COLUMN]->(c:Column) WHERE substring(c.key, size(d.key) + 1) =~ r.columnRegex
  RETURN c
}
WITH DISTINCT c AS source
OPTIONAL MATCH (t:Tag {key: $tag})
WITH source, coalesce(t.aggregation, 'pass') = 'pass' AS passAgg
MATCH p = (source)-[:FEEDS*1..10]->(x:Column)
WITH source, x, p, passAgg, [f IN relationships(p) |
  CASE
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] STARTS WITH 'DIRECT/' AND NOT coalesce(f.masked[k], false)
         AND (passAgg OR f.roles[k] <> 'DIRECT/AGGREGATION')) THEN 'unmasked'
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] = 'DIRECT/AGGREGATION' AND NOT coalesce(f.masked[k], false)) THEN 'aggregated'
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] STARTS WITH 'DIRECT/') THEN 'masked'
  END] AS hops
WHERE all(h IN hops[..-1] WHERE h = 'unmasked') AND last(hops) IS NOT NULL
WITH x, last(hops) AS status, length(p) AS hops, source.key AS from, [f IN relationships(p) | f.job] AS jobs
ORDER BY CASE status WHEN 'unmasked' THEN 0 WHEN 'aggregated' THEN 1 ELSE 2 END, hops, from
WITH x, head(collect({status: status, hops: hops, from: from, jobs: jobs})) AS best
RETURN x.datasetKey AS dataset, x.name AS column, best.status AS status, best.hops AS hops, best.from AS from, best.jobs AS jobs
ORDER BY dataset, column
