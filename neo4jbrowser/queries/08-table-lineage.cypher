// colline 8: table-level lineage rolled up from the column edges (FEEDS) and row-level dependencies (DECIDES_ROWS), with the jobs behind it (a current edge's lastSeen is its job's LINEAGE's)
CALL () {
  MATCH (a:Dataset)-[:HAS_COLUMN]->(:Column)-[f:FEEDS]->(:Column)<-[:HAS_COLUMN]-(b:Dataset)
  RETURN a, b, f
  UNION ALL
  MATCH (a:Dataset)-[:HAS_COLUMN]->(:Column)-[f:DECIDES_ROWS]->(b:Dataset)
  RETURN a, b, f
}
OPTIONAL MATCH (:Job {key: f.job})-[l:LINEAGE]->(b) WHERE f.lastSeen IS NULL
RETURN a.key AS upstream, b.key AS downstream, count(CASE WHEN type(f) = 'FEEDS' THEN 1 END) AS columnEdges,
       count(CASE WHEN f.type = 'DIRECT' THEN 1 END) AS directEdges,
       count(CASE WHEN type(f) = 'DECIDES_ROWS' THEN 1 END) AS rowEdges,
       collect(DISTINCT f.job) AS jobs, max(coalesce(f.lastSeen, l.lastSeen)) AS lastSeen
ORDER BY upstream, downstream
LIMIT 500
