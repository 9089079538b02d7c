-- data source CTAS with partitions
DROP DATABASE IF EXISTS write_ctas_partitioned CASCADE;
CREATE DATABASE write_ctas_partitioned;
USE write_ctas_partitioned;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst USING parquet PARTITIONED BY (kind) AS SELECT id, amount, kind FROM src;
