// colline 11: what retention would prune now, per job: runs whose query ended more than $runDays days ago (COLLINE_RETENTION_RUN_DAYS) and FEEDS / DECIDES_ROWS no run confirmed for $edgeDays days (COLLINE_RETENTION_EDGE_DAYS: superseded edges by their own lastSeen, current ones by their job's LINEAGE), with how many of those are marked stale already
// :param runDays => 90
// :param edgeDays => 30
CALL () {
  MATCH (j:Job)-[:HAS_RUN]->(r:Run)
  WHERE coalesce(r.endedAt, r.emittedAt) < datetime() - duration({days: $runDays})
  RETURN j.key AS job, count(r) AS runs, 0 AS feeds, 0 AS decidesRows, 0 AS alreadyStale
  UNION ALL
  MATCH ()-[f:FEEDS|DECIDES_ROWS]->()
  WHERE f.lastSeen < datetime() - duration({days: $edgeDays})
  RETURN f.job AS job, 0 AS runs, count(CASE WHEN type(f) = 'FEEDS' THEN 1 END) AS feeds,
         count(CASE WHEN type(f) = 'DECIDES_ROWS' THEN 1 END) AS decidesRows, count(f.stale) AS alreadyStale
  UNION ALL
  MATCH (j:Job)-[l:LINEAGE]->(d:Dataset)
  WHERE l.lastSeen < datetime() - duration({days: $edgeDays})
  CALL (j, d) {
    MATCH (d)-[:HAS_COLUMN]->(:Column)-[:HAS_FIELD*0..]->(:Column)<-[f:FEEDS {job: j.key}]-(:Column) WHERE f.lastSeen IS NULL RETURN f
    UNION ALL
    MATCH (d)<-[f:DECIDES_ROWS {job: j.key}]-(:Column) WHERE f.lastSeen IS NULL RETURN f
  }
  RETURN j.key AS job, 0 AS runs, count(CASE WHEN type(f) = 'FEEDS' THEN 1 END) AS feeds,
         count(CASE WHEN type(f) = 'DECIDES_ROWS' THEN 1 END) AS decidesRows, count(CASE WHEN f.stale OR l.stale THEN 1 END) AS alreadyStale
}
RETURN job, sum(runs) AS runs, sum(feeds) AS feeds, sum(decidesRows) AS decidesRows, sum(alreadyStale) AS alreadyStale
ORDER BY runs + feeds + decidesRows DESC, job
