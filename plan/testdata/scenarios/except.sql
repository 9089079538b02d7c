-- EXCEPT: values from the left, the right side is FILTER
DROP DATABASE IF EXISTS except CASCADE;
CREATE DATABASE except;
USE except;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src EXCEPT SELECT id, country FROM dim;
