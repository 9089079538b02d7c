-- DELETE FROM t WHERE …, on a copy-on-write and on a merge-on-read Iceberg table (ReplaceData, WriteDelta)
-- connectors: iceberg
DROP DATABASE IF EXISTS delete_where CASCADE;
CREATE DATABASE delete_where;
USE delete_where;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.delete_where;
CREATE OR REPLACE TABLE ice.delete_where.cow (id bigint, name string, kind string, amount double) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'copy-on-write');
CREATE OR REPLACE TABLE ice.delete_where.mor (id bigint, name string, kind string, amount double) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read');
INSERT INTO ice.delete_where.cow VALUES (1, 'a', 'buy', 1.0), (2, 'b', 'sell', -1.0);
INSERT INTO ice.delete_where.mor VALUES (1, 'a', 'buy', 1.0), (2, 'b', 'sell', -1.0);
DELETE FROM ice.delete_where.cow WHERE amount < 0 AND upper(name) = 'B';
DELETE FROM ice.delete_where.mor WHERE amount < 0 AND upper(name) = 'B';
