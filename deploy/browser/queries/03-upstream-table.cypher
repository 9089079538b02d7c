// colline 3: upstream of a column, as a table: every source column, its distance, and whether its values flow in (DIRECT all the way) or it only filters, joins or groups
// :param column => 'spark_catalog/shop.top_countries#revenue'
MATCH p = (src:Column)-[:FEEDS*1..5]->(:Column {key: $column})
MATCH (ds:Dataset)-[:HAS_COLUMN]->(src)
WITH ds, src, p, all(f IN relationships(p) WHERE f.type = 'DIRECT') AS direct
RETURN ds.key AS dataset, src.name AS column, min(length(p)) AS hops,
       any(x IN collect(direct) WHERE x) AS valueFlows
ORDER BY hops, dataset, column
