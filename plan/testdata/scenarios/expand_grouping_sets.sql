-- GROUPING SETS go through Expand; grouping_id reads no column
DROP DATABASE IF EXISTS expand_grouping_sets CASCADE;
CREATE DATABASE expand_grouping_sets;
USE expand_grouping_sets;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, name string, total double, gid bigint) USING parquet;
INSERT INTO dst SELECT kind, name, sum(amount), grouping_id() FROM src GROUP BY GROUPING SETS ((kind), (kind, name), ());
