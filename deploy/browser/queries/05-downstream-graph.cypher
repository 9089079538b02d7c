// colline 5: downstream of a column, as a graph: what its values feed and the datasets whose rows it decides (depth 10 relationships)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = (:Column {key: $column})-[:FEEDS|DECIDES_ROWS|HAS_COLUMN*1..10]->(:Column)
RETURN p
