-- LEFT SEMI JOIN: only the left side is output, the right key is JOIN
DROP DATABASE IF EXISTS join_left_semi CASCADE;
CREATE DATABASE join_left_semi;
USE join_left_semi;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src LEFT SEMI JOIN dim ON src.id = dim.id;
