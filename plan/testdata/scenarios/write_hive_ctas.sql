-- Hive CTAS: one set of edges (the nested insert is skipped)
DROP DATABASE IF EXISTS write_hive_ctas CASCADE;
CREATE DATABASE write_hive_ctas;
USE write_hive_ctas;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE hdst STORED AS TEXTFILE AS SELECT id, name, amount * 2 AS doubled FROM src WHERE kind = 'buy';
