-- INSERT INTO an Iceberg table (AppendData, a v2 write)
-- connectors: iceberg
DROP DATABASE IF EXISTS write_v2_append CASCADE;
CREATE DATABASE write_v2_append;
USE write_v2_append;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.write_v2_append;
CREATE OR REPLACE TABLE ice.write_v2_append.dst (id bigint, name string, total double) USING iceberg;
INSERT INTO ice.write_v2_append.dst SELECT id, upper(name), amount * 2 FROM src WHERE kind = 'buy';
