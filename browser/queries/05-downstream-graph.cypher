// colline 5: downstream of a column, as a graph: what its values feed and the datasets whose rows it decides (depth 10 relationships; one shortest path to each of the nearest 1000 nodes)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH (s:Column {key: $column})
WITH s, reduce(bfs = {front: [s], seen: [s], reached: []}, depth IN range(1, 10) |
  CASE WHEN bfs.front = [] OR size(bfs.reached) >= 1000 THEN bfs ELSE
    head([next IN [COLLECT {
      UNWIND bfs.front AS x
      MATCH (x)-[:FEEDS|DECIDES_ROWS|HAS_COLUMN]->(n)
      WHERE NOT n IN bfs.seen AND (n:Column OR depth < 10)
      RETURN DISTINCT n
    }] | {front: next, seen: bfs.seen + next, reached: bfs.reached + [n IN next | {n: n, depth: depth}]}])
  END) AS bfs
UNWIND bfs.reached AS x
WITH s, x.n AS n ORDER BY x.depth, n.key LIMIT 1000
WITH s, collect(n) AS nearest
MATCH p = ANY SHORTEST (s)(()-[:FEEDS|DECIDES_ROWS|HAS_COLUMN]->(b) WHERE b IN nearest){1,10}(n)
RETURN p
ORDER BY length(p), n.key
