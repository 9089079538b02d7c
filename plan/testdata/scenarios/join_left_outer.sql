-- LEFT OUTER JOIN
DROP DATABASE IF EXISTS join_left_outer CASCADE;
CREATE DATABASE join_left_outer;
USE join_left_outer;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (name string, country string) USING parquet;
INSERT INTO dst SELECT s.name, d.country FROM src s LEFT JOIN dim d ON s.id = d.id;
