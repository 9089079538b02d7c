// colline 9: stale lineage relationships (FEEDS, DECIDES_ROWS), not confirmed by any run for $days days, per job: the superseded ones by their own lastSeen, the current ones by their job's LINEAGE (retention deletes them with COLLINE_RETENTION_EDGE_ACTION=delete)
// :param days => 30
CALL () {
  MATCH ()-[f:FEEDS|DECIDES_ROWS]->()
  WHERE f.lastSeen < datetime() - duration({days: $days})
  RETURN f.job AS job, f.lastSeen AS lastSeen
  UNION ALL
  MATCH (j:Job)-[l:LINEAGE]->(d:Dataset)
  WHERE l.lastSeen < datetime() - duration({days: $days})
  CALL (j, d) {
    MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(:Column)<-[f:FEEDS {job: j.key}]-(:Column) WHERE f.lastSeen IS NULL RETURN f
    UNION ALL
    MATCH (d)<-[f:DECIDES_ROWS {job: j.key}]-(:Column) WHERE f.lastSeen IS NULL RETURN f
  }
  RETURN j.key AS job, l.lastSeen AS lastSeen
}
RETURN job, count(*) AS staleEdges, min(lastSeen) AS oldest, max(lastSeen) AS newest
ORDER BY staleEdges DESC, job
