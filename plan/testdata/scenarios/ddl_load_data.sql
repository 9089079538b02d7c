-- LOAD DATA: a path feeds a table (no column mapping)
DROP DATABASE IF EXISTS ddl_load_data CASCADE;
CREATE DATABASE ddl_load_data;
USE ddl_load_data;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
INSERT OVERWRITE LOCAL DIRECTORY '/tmp/colline-capture/out/ddl_load_data' STORED AS TEXTFILE SELECT id, name FROM src;
CREATE TABLE t (id bigint, name string) STORED AS TEXTFILE;
LOAD DATA LOCAL INPATH '/tmp/colline-capture/out/ddl_load_data' OVERWRITE INTO TABLE t;
