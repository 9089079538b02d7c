// colline 5: downstream of a column, as a graph: what its values feed and the datasets whose rows it decides (depth 10 relationships; the nearest 1000 nodes, each with a relationship that reaches it on a shortest path)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH (s:Column {key: $column})
WITH reduce(bfs = {front: [s], seen: [s], reached: []}, depth IN range(1, 10) |
  CASE WHEN bfs.front = [] OR size(COLLECT { UNWIND bfs.reached AS x RETURN DISTINCT x.n }) >= 1000 THEN bfs ELSE
    head([next IN [COLLECT {
      UNWIND bfs.front AS x
      MATCH (x)-[r:FEEDS|DECIDES_ROWS|HAS_COLUMN]->(n)
      WHERE NOT n IN bfs.seen AND (n:Column OR depth < 10)
      RETURN {n: n, r: r, depth: depth}
    }] | {front: COLLECT { UNWIND next AS x RETURN DISTINCT x.n }, seen: bfs.seen + [x IN next | x.n], reached: bfs.reached + next}])
  END) AS bfs
UNWIND bfs.reached AS x
WITH x.n AS n, x.depth AS depth, x.r AS r ORDER BY startNode(r).key, type(r), r.job
WITH n, depth, head(collect(r)) AS r ORDER BY depth, n.key LIMIT 1000
MATCH p = ()-[r]->()
RETURN p
ORDER BY depth, n.key
