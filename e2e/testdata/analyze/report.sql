-- TestImpact: a second job reading the skeleton's output, analyzed against the graph and replayed into it.
CREATE TABLE shop.report (country string, revenue decimal(20,2)) USING parquet;
INSERT INTO shop.report SELECT country, revenue FROM shop.top_countries WHERE revenue > 0;
