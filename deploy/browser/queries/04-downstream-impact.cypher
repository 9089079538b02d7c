// colline 4: downstream impact of changing a column: affected datasets and columns, and the jobs that carry the change (depth 10)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = (:Column {key: $column})-[:FEEDS*1..10]->(d:Column)
MATCH (ds:Dataset)-[:HAS_COLUMN]->(d)
UNWIND relationships(p) AS f
RETURN ds.key AS dataset, collect(DISTINCT d.name) AS columns, min(length(p)) AS hops,
       collect(DISTINCT f.job) AS viaJobs
ORDER BY hops, dataset
