// colline 5: downstream of a column, as a graph: what its values feed and the datasets whose rows it decides (depth 10 relationships; one shortest path to each of the nearest 1000 nodes)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = ANY SHORTEST (:Column {key: $column})-[:FEEDS|DECIDES_ROWS|HAS_COLUMN]->{1,10}(n)
WHERE n:Column OR length(p) < 10
RETURN p
ORDER BY length(p)
LIMIT 1000
