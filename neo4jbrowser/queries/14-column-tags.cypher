// colline 14: a column's tags, each with its path from the tagged column (graph view: the paths)
// :param column => 'spark_catalog/shop.top_countries#revenue'
MATCH p = (s:Column)-[:FEEDS*0..10]->(:Column {key: $column})
MATCH (r:TagRule)
WHERE r.columnKey = s.key OR r:TagPattern AND s.datasetKey STARTS WITH r.datasetPrefix AND s.datasetKey =~ r.datasetRegex
      AND substring(s.key, size(s.datasetKey) + 1) =~ r.columnRegex
OPTIONAL MATCH (t:Tag {key: r.tag})
WITH p, r, coalesce(t.aggregation, 'pass') = 'pass' AS passAgg
WITH p, r, [f IN relationships(p) |
  CASE
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] STARTS WITH 'DIRECT/' AND NOT coalesce(f.masked[k], false)
         AND (passAgg OR f.roles[k] <> 'DIRECT/AGGREGATION')) THEN 'unmasked'
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] = 'DIRECT/AGGREGATION' AND NOT coalesce(f.masked[k], false)) THEN 'aggregated'
    WHEN any(k IN range(0, size(f.roles) - 1) WHERE f.roles[k] STARTS WITH 'DIRECT/') THEN 'masked'
  END] AS hops
WHERE all(h IN hops[..-1] WHERE h = 'unmasked') AND (size(hops) = 0 OR last(hops) IS NOT NULL)
RETURN p, r.tag AS tag, r.value AS value, r.source AS source, coalesce(last(hops), 'unmasked') AS status, length(p) AS hops
ORDER BY tag, hops
