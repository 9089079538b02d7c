-- arithmetic and functions: DIRECT/TRANSFORMATION with the expression text
DROP DATABASE IF EXISTS project_expression CASCADE;
CREATE DATABASE project_expression;
USE project_expression;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (next_id bigint, upper_name string, total double) USING parquet;
INSERT INTO dst SELECT id + 1, upper(name), amount * 2 + id FROM src;
