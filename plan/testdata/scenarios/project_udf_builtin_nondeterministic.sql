-- rand/uuid/current_timestamp have no source columns
DROP DATABASE IF EXISTS project_udf_builtin_nondeterministic CASCADE;
CREATE DATABASE project_udf_builtin_nondeterministic;
USE project_udf_builtin_nondeterministic;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, r double, u string, t timestamp) USING parquet;
INSERT INTO dst SELECT id, rand(), uuid(), current_timestamp() FROM src;
