// colline 6: jobs, their runs and last run
MATCH (j:Job)
OPTIONAL MATCH (j)-[:HAS_RUN]->(r:Run)
RETURN j.key AS job, count(r) AS runs, max(r.endedAt) AS lastRun,
       count(CASE WHEN r.status <> 'success' THEN 1 END) AS failedRuns
ORDER BY job
