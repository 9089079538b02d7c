-- a LATERAL subquery
DROP DATABASE IF EXISTS subquery_lateral CASCADE;
CREATE DATABASE subquery_lateral;
USE subquery_lateral;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, country string) USING parquet;
INSERT INTO dst SELECT s.id, l.country FROM src s, LATERAL (SELECT d.country FROM dim d WHERE d.id = s.id) l;
