-- INTERSECT ALL and EXCEPT ALL
DROP DATABASE IF EXISTS intersect_all_except_all CASCADE;
CREATE DATABASE intersect_all_except_all;
USE intersect_all_except_all;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src INTERSECT ALL SELECT id FROM dim;
INSERT INTO dst SELECT id FROM src EXCEPT ALL SELECT id FROM dim;
