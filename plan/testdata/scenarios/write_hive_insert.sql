-- InsertIntoHiveTable (Hive serde tables)
DROP DATABASE IF EXISTS write_hive_insert CASCADE;
CREATE DATABASE write_hive_insert;
USE write_hive_insert;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE hsrc (id bigint, name string) STORED AS TEXTFILE;
CREATE TABLE hdst (id bigint, name string) STORED AS TEXTFILE;
INSERT INTO hdst SELECT id, upper(name) FROM hsrc;
INSERT OVERWRITE TABLE hdst SELECT id, name FROM hsrc WHERE id > 0;
