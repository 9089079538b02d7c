-- a CTE referenced once is inlined
DROP DATABASE IF EXISTS cte_simple CASCADE;
CREATE DATABASE cte_simple;
USE cte_simple;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, total double) USING parquet;
INSERT INTO dst WITH b AS (SELECT id, amount * 2 AS total FROM src WHERE kind = 'buy') SELECT id, total FROM b;
