// colline 8: table-level lineage rolled up from the column edges, with the jobs behind it
MATCH (a:Dataset)-[:HAS_COLUMN]->(:Column)-[f:FEEDS]->(:Column)<-[:HAS_COLUMN]-(b:Dataset)
RETURN a.key AS upstream, b.key AS downstream, count(f) AS columnEdges,
       count(CASE WHEN f.type = 'DIRECT' THEN 1 END) AS directEdges,
       collect(DISTINCT f.job) AS jobs, max(f.lastSeen) AS lastSeen
ORDER BY upstream, downstream
LIMIT 500
