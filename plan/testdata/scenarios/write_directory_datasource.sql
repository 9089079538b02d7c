-- INSERT OVERWRITE DIRECTORY ... USING: the target is a path
DROP DATABASE IF EXISTS write_directory_datasource CASCADE;
CREATE DATABASE write_directory_datasource;
USE write_directory_datasource;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
INSERT OVERWRITE DIRECTORY '/tmp/colline-capture/out/write_directory_datasource' USING parquet SELECT id, name FROM src;
