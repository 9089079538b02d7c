-- UNION (distinct) adds a Distinct over the union
DROP DATABASE IF EXISTS union_distinct CASCADE;
CREATE DATABASE union_distinct;
USE union_distinct;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src UNION SELECT id FROM dim;
