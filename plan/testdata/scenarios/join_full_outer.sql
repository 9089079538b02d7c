-- FULL OUTER JOIN with coalesce of both keys
DROP DATABASE IF EXISTS join_full_outer CASCADE;
CREATE DATABASE join_full_outer;
USE join_full_outer;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string, country string) USING parquet;
INSERT INTO dst SELECT coalesce(s.id, d.id), s.name, d.country FROM src s FULL OUTER JOIN dim d ON s.id = d.id;
