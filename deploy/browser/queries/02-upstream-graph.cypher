// colline 2: upstream of a column, as a graph (depth 5; edit 1..5 to change it)
// :param column => 'spark_catalog/shop.top_countries#revenue'
MATCH p = (:Column)-[:FEEDS*1..5]->(:Column {key: $column})
RETURN p
