-- INSERT into a Hive parquet table (converted to a data source write)
DROP DATABASE IF EXISTS write_hive_format_insert CASCADE;
CREATE DATABASE write_hive_format_insert;
USE write_hive_format_insert;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE hdst (id bigint, name string) STORED AS PARQUET;
INSERT INTO hdst SELECT id, name FROM src;
