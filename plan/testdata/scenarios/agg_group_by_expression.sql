-- grouping by an expression
DROP DATABASE IF EXISTS agg_group_by_expression CASCADE;
CREATE DATABASE agg_group_by_expression;
USE agg_group_by_expression;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (k string, mx double) USING parquet;
INSERT INTO dst SELECT upper(kind), max(amount) FROM src GROUP BY upper(kind);
