-- a scalar subquery in the SELECT list feeds the column (TRANSFORMATION)
DROP DATABASE IF EXISTS subquery_scalar CASCADE;
CREATE DATABASE subquery_scalar;
USE subquery_scalar;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, mx double) USING parquet;
INSERT INTO dst SELECT id, (SELECT max(amount) FROM src) FROM dim;
