-- a CTE that reads another CTE
DROP DATABASE IF EXISTS cte_nested CASCADE;
CREATE DATABASE cte_nested;
USE cte_nested;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, v double) USING parquet;
INSERT INTO dst WITH a AS (SELECT id, amount FROM src), b AS (SELECT id, amount + 1 AS v FROM a WHERE id > 0) SELECT id, v FROM b;
