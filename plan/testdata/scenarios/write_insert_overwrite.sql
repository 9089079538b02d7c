-- INSERT OVERWRITE TABLE: mode overwrite
DROP DATABASE IF EXISTS write_insert_overwrite CASCADE;
CREATE DATABASE write_insert_overwrite;
USE write_insert_overwrite;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT OVERWRITE TABLE dst SELECT id, name FROM src;
