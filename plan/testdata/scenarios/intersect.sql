-- INTERSECT: values from the left, the right side decides which rows remain (FILTER)
DROP DATABASE IF EXISTS intersect CASCADE;
CREATE DATABASE intersect;
USE intersect;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint) USING parquet;
INSERT INTO dst SELECT id FROM src INTERSECT SELECT id FROM dim;
