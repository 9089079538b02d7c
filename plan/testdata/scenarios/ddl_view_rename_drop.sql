-- ALTER VIEW ... RENAME and DROP VIEW of a persistent view; DDL on a temporary view is not published
DROP DATABASE IF EXISTS ddl_view_rename_drop CASCADE;
CREATE DATABASE ddl_view_rename_drop;
USE ddl_view_rename_drop;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE VIEW v AS SELECT id FROM src;
ALTER VIEW v RENAME TO v2;
DROP VIEW v2;
CREATE OR REPLACE TEMPORARY VIEW ddl_view_rename_drop_tv AS SELECT id FROM src;
DROP VIEW ddl_view_rename_drop_tv;
