// colline 10: writes without column lineage, per dataset and job: runs whose event the listener degraded to fit its size cap (Run.degraded); their columns are known, where the values come from is not
MATCH (j:Job)-[:HAS_RUN]->(r:Run)-[w:WROTE {columnLineage: 'missing'}]->(ds:Dataset)
RETURN ds.key AS dataset, j.key AS job, count(r) AS runs, max(r.endedAt) AS lastRun
ORDER BY dataset, job
