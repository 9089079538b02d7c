-- three-part and deeper names: a V2 catalog (Iceberg's Hadoop catalog `ice`) with multi-level namespaces; the catalog and every namespace level stay in the dataset key
-- connectors: iceberg
DROP DATABASE IF EXISTS v2_multilevel_namespace CASCADE;
CREATE DATABASE v2_multilevel_namespace;
USE v2_multilevel_namespace;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.v2_multilevel_namespace;
CREATE NAMESPACE IF NOT EXISTS ice.v2_multilevel_namespace.sales;
CREATE NAMESPACE IF NOT EXISTS ice.v2_multilevel_namespace.sales.eu;
CREATE OR REPLACE TABLE ice.v2_multilevel_namespace.sales.eu.orders (id bigint, kind string, amount double) USING iceberg;
INSERT INTO ice.v2_multilevel_namespace.sales.eu.orders SELECT id, kind, amount FROM src;
CREATE OR REPLACE TABLE ice.v2_multilevel_namespace.sales.totals USING iceberg AS SELECT kind, sum(amount) AS total FROM ice.v2_multilevel_namespace.sales.eu.orders GROUP BY kind;
INSERT INTO spark_catalog.v2_multilevel_namespace.src (id, kind, amount) SELECT id, kind, amount FROM ice.v2_multilevel_namespace.sales.eu.orders;
