-- a CTE referenced twice: each reference has fresh exprIds, both map back to the definition
DROP DATABASE IF EXISTS cte_twice CASCADE;
CREATE DATABASE cte_twice;
USE cte_twice;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, a double, b double) USING parquet;
INSERT INTO dst WITH c AS (SELECT kind, sum(amount) AS total FROM src GROUP BY kind) SELECT x.kind, x.total, y.total FROM c x JOIN c y ON x.kind = y.kind;
