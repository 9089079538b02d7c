// colline 4: downstream impact of changing a column: affected datasets and columns, their distance, and the jobs that write them (depth 10, nearest 1000 columns)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = ANY SHORTEST (:Column {key: $column})-[:FEEDS]->{1,10}(d:Column)
WITH d, length(p) AS hops
ORDER BY hops LIMIT 1000
MATCH (ds:Dataset)-[:HAS_COLUMN]->(d)
OPTIONAL MATCH (:Column)-[f:FEEDS]->(d)
RETURN ds.key AS dataset, collect(DISTINCT d.name) AS columns, min(hops) AS hops,
       collect(DISTINCT f.job) AS viaJobs
ORDER BY hops, dataset
