-- INSERT with a column list: the analyzer reorders by name, missing columns get NULL
DROP DATABASE IF EXISTS insert_column_list CASCADE;
CREATE DATABASE insert_column_list;
USE insert_column_list;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (a bigint, b string, c double) USING parquet;
INSERT INTO dst (c, a) SELECT amount, id FROM src;
