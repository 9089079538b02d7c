-- InsertIntoHiveTable with a static and a dynamic partition
DROP DATABASE IF EXISTS write_hive_partitioned CASCADE;
CREATE DATABASE write_hive_partitioned;
USE write_hive_partitioned;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE hdst (id bigint, name string) PARTITIONED BY (day string, kind string) STORED AS TEXTFILE;
SET hive.exec.dynamic.partition.mode=nonstrict;
INSERT INTO hdst PARTITION (day = '2024-01-01', kind) SELECT id, name, kind FROM src;
