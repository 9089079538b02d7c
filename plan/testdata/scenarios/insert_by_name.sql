-- INSERT ... BY NAME matches query columns to target columns by name
DROP DATABASE IF EXISTS insert_by_name CASCADE;
CREATE DATABASE insert_by_name;
USE insert_by_name;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (a bigint, b string) USING parquet;
INSERT INTO dst BY NAME SELECT name AS b, id AS a FROM src;
