// colline 2: upstream of a column, as a graph: the columns its values come from (FEEDS) and those that decide which rows its dataset holds (DECIDES_ROWS, then HAS_COLUMN); depth 10 relationships, edit 1..10 to change it
// :param column => 'spark_catalog/shop.top_countries#revenue'
MATCH p = (:Column)-[:FEEDS|DECIDES_ROWS|HAS_COLUMN*1..10]->(:Column {key: $column})
RETURN p
