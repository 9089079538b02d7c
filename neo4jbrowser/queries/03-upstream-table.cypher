// colline 3: upstream of a column, as a table: every source column, its distance in lineage steps, whether its values flow in (a DIRECT role on every step) and whether it decides rows on the way (DECIDES_ROWS)
// :param column => 'spark_catalog/shop.top_countries#revenue'
MATCH p = (src:Column)-[:FEEDS|DECIDES_ROWS|HAS_COLUMN*1..10]->(:Column {key: $column})
MATCH (ds:Dataset)-[:HAS_COLUMN]->(src)
WITH ds, src, [r IN relationships(p) WHERE type(r) <> 'HAS_COLUMN'] AS steps
WITH ds, src, size(steps) AS hops,
     all(r IN steps WHERE type(r) = 'FEEDS' AND any(x IN r.roles WHERE x STARTS WITH 'DIRECT/')) AS direct,
     any(r IN steps WHERE type(r) = 'DECIDES_ROWS') AS rows
RETURN ds.key AS dataset, src.name AS column, min(hops) AS hops,
       any(x IN collect(direct) WHERE x) AS valueFlows, any(x IN collect(rows) WHERE x) AS decidesRows
ORDER BY hops, dataset, column
