// colline 4: downstream impact of changing a column: affected datasets and columns, their distance in lineage steps (a column deciding a dataset's rows affects all its columns), and the jobs that write them (depth 20 relationships, nearest 1000 columns)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = ANY SHORTEST (:Column {key: $column})-[:FEEDS|DECIDES_ROWS|HAS_COLUMN]->{1,20}(d:Column)
WITH d, p ORDER BY length(p) LIMIT 1000
WITH d, size([r IN relationships(p) WHERE type(r) <> 'HAS_COLUMN']) AS hops
MATCH (ds:Dataset)-[:HAS_COLUMN]->(d)
WITH ds, collect(DISTINCT d.name) AS columns, min(hops) AS hops
RETURN ds.key AS dataset, columns, hops,
       COLLECT { MATCH (j:Job)-[:HAS_RUN]->(:Run)-[:WROTE]->(ds) RETURN DISTINCT j.key } AS viaJobs
ORDER BY hops, dataset
