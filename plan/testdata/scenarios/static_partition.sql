-- a static partition value is a literal: the partition column has no source
DROP DATABASE IF EXISTS static_partition CASCADE;
CREATE DATABASE static_partition;
USE static_partition;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, amount double, day string) USING parquet PARTITIONED BY (day);
INSERT INTO dst PARTITION (day = '2024-01-01') SELECT id, amount FROM src;
