-- UPDATE t SET c = expr WHERE …, on a copy-on-write and on a merge-on-read Iceberg table (ReplaceData, WriteDelta)
-- connectors: iceberg
DROP DATABASE IF EXISTS update_where CASCADE;
CREATE DATABASE update_where;
USE update_where;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.update_where;
CREATE OR REPLACE TABLE ice.update_where.cow (id bigint, name string, kind string, amount double) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.update.mode' = 'copy-on-write');
CREATE OR REPLACE TABLE ice.update_where.mor (id bigint, name string, kind string, amount double) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.update.mode' = 'merge-on-read');
UPDATE ice.update_where.cow SET amount = amount * 2, name = upper(name) WHERE kind = 'buy';
UPDATE ice.update_where.mor SET amount = amount * 2, name = upper(name) WHERE kind = 'buy';
