-- IN (subquery) is a FILTER over both sides
DROP DATABASE IF EXISTS subquery_in CASCADE;
CREATE DATABASE subquery_in;
USE subquery_in;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src WHERE id IN (SELECT id FROM dim WHERE segment = 'x');
