-- a CTE inside a CTAS
DROP DATABASE IF EXISTS cte_in_ctas CASCADE;
CREATE DATABASE cte_in_ctas;
USE cte_in_ctas;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst USING parquet AS WITH c AS (SELECT id, name FROM src) SELECT c1.id, c2.name FROM c c1 JOIN c c2 ON c1.id = c2.id;
