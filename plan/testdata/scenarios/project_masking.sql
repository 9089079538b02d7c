-- hashes and masks set the masking flag
DROP DATABASE IF EXISTS project_masking CASCADE;
CREATE DATABASE project_masking;
USE project_masking;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (h1 string, h2 string, h3 int, h4 bigint, plain string) USING parquet;
INSERT INTO dst SELECT md5(name), sha2(kind, 256), hash(id), xxhash64(name, kind), concat(name, kind) FROM src;
