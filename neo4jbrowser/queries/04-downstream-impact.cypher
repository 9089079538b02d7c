// colline 4: downstream impact of changing a column: affected datasets and columns, their distance in lineage steps (a column deciding a dataset's rows affects all its columns), and the jobs that write them (depth 20 relationships, nearest 1000 columns)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH (s:Column {key: $column})
WITH reduce(bfs = {front: [{n: s, hops: 0}], seen: [s], reached: []}, depth IN range(1, 20) |
  CASE WHEN bfs.front = [] OR size(COLLECT { UNWIND bfs.reached AS x RETURN DISTINCT x.n }) >= 1000 THEN bfs ELSE
    head([next IN [COLLECT {
      UNWIND bfs.front AS f
      WITH f.n AS x, f.hops AS h
      MATCH (x)-[r:FEEDS|DECIDES_ROWS|HAS_COLUMN]->(n)
      WHERE NOT n IN bfs.seen
      RETURN DISTINCT {n: n, hops: h + CASE type(r) WHEN 'HAS_COLUMN' THEN 0 ELSE 1 END, depth: depth}
    }] | {front: next, seen: bfs.seen + [x IN next | x.n], reached: bfs.reached + [x IN next WHERE x.n:Column]}])
  END) AS bfs
UNWIND bfs.reached AS c
WITH c.n AS d, min(c.depth) AS depth, min(c.hops) AS hops ORDER BY depth, d.key LIMIT 1000
MATCH (ds:Dataset)-[:HAS_COLUMN]->(d)
WITH ds, collect(DISTINCT d.name) AS columns, min(hops) AS hops
RETURN ds.key AS dataset, columns, hops,
       COLLECT { MATCH (j:Job)-[:HAS_RUN]->(:Run)-[:WROTE]->(ds) RETURN DISTINCT j.key } AS viaJobs
ORDER BY hops, dataset
