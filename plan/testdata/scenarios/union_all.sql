-- UNION ALL maps every child by position
DROP DATABASE IF EXISTS union_all CASCADE;
CREATE DATABASE union_all;
USE union_all;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, label string) USING parquet;
INSERT INTO dst SELECT id, name FROM src UNION ALL SELECT id, country FROM dim;
