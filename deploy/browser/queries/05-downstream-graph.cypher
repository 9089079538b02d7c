// colline 5: downstream of a column, as a graph (depth 10)
// :param column => 'spark_catalog/shop.orders#amount'
MATCH p = (:Column {key: $column})-[:FEEDS*1..10]->(:Column)
RETURN p
