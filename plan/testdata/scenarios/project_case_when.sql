-- CASE: WHEN conditions are INDIRECT/CONDITIONAL, THEN/ELSE values DIRECT/TRANSFORMATION
DROP DATABASE IF EXISTS project_case_when CASCADE;
CREATE DATABASE project_case_when;
USE project_case_when;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, bucket double) USING parquet;
INSERT INTO dst SELECT id, CASE WHEN kind = 'buy' THEN amount WHEN name IS NULL THEN 0 ELSE -amount END FROM src;
