-- a dynamic partition column is fed by its query column
DROP DATABASE IF EXISTS dynamic_partition CASCADE;
CREATE DATABASE dynamic_partition;
USE dynamic_partition;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, amount double, day string) USING parquet PARTITIONED BY (day);
INSERT OVERWRITE TABLE dst PARTITION (day) SELECT id, amount, date_format(ts, 'yyyy-MM-dd') FROM src;
