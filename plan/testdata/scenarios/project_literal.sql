-- literal columns have no source; the other column keeps its edge
DROP DATABASE IF EXISTS project_literal CASCADE;
CREATE DATABASE project_literal;
USE project_literal;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, tag string, n int) USING parquet;
INSERT INTO dst SELECT id, 'fixed', 42 FROM src;
