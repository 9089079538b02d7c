-- LEFT ANTI JOIN
DROP DATABASE IF EXISTS join_left_anti CASCADE;
CREATE DATABASE join_left_anti;
USE join_left_anti;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dim (id bigint, country string, segment string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst SELECT id, name FROM src LEFT ANTI JOIN dim ON src.id = dim.id AND dim.segment = 'x';
