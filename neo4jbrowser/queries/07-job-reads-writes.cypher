// colline 7: what a job reads and writes, over all its runs
// :param job => 'spark_catalog/colline-spark-sql'
MATCH (:Job {key: $job})-[:HAS_RUN]->(r:Run)-[a:READ|WROTE]->(ds:Dataset)
RETURN type(a) AS access, ds.key AS dataset, ds.kind AS kind, count(DISTINCT r) AS runs,
       max(r.endedAt) AS lastRun, collect(DISTINCT a.mode) AS modes
ORDER BY access, dataset
