-- a recursive CTE (Spark 4.x): UnionLoop / UnionLoopRef
-- spark: 4.1
DROP DATABASE IF EXISTS cte_recursive CASCADE;
CREATE DATABASE cte_recursive;
USE cte_recursive;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, depth int) USING parquet;
INSERT INTO dst WITH RECURSIVE r (id, depth) AS (SELECT id, 0 FROM src UNION ALL SELECT id + 1, depth + 1 FROM r WHERE depth < 3) SELECT id, depth FROM r;
