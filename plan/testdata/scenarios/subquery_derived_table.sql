-- a derived table in FROM
DROP DATABASE IF EXISTS subquery_derived_table CASCADE;
CREATE DATABASE subquery_derived_table;
USE subquery_derived_table;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (k string, total double) USING parquet;
INSERT INTO dst SELECT t.k, t.total FROM (SELECT kind AS k, sum(amount) AS total FROM src GROUP BY kind) t WHERE t.total > 0;
