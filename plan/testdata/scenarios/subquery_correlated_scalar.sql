-- a correlated scalar subquery
DROP DATABASE IF EXISTS subquery_correlated_scalar CASCADE;
CREATE DATABASE subquery_correlated_scalar;
USE subquery_correlated_scalar;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, country string) USING parquet;
INSERT INTO dst SELECT s.id, (SELECT max(d.country) FROM dim d WHERE d.id = s.id) FROM src s;
