// colline 9: stale lineage relationships (FEEDS, DECIDES_ROWS), not confirmed by any run for $days days, per job (to delete them: MATCH ()-[f:FEEDS|DECIDES_ROWS]->() WHERE f.lastSeen < datetime() - duration({days: $days}) DELETE f)
// :param days => 30
MATCH ()-[f:FEEDS|DECIDES_ROWS]->()
WHERE f.lastSeen < datetime() - duration({days: $days})
RETURN f.job AS job, count(*) AS staleEdges, min(f.lastSeen) AS oldest, max(f.lastSeen) AS newest
ORDER BY staleEdges DESC, job
