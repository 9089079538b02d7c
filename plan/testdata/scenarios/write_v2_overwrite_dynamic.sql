-- INSERT OVERWRITE of a partitioned Iceberg table in dynamic partition overwrite mode (OverwritePartitionsDynamic)
-- connectors: iceberg
DROP DATABASE IF EXISTS write_v2_overwrite_dynamic CASCADE;
CREATE DATABASE write_v2_overwrite_dynamic;
USE write_v2_overwrite_dynamic;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.write_v2_overwrite_dynamic;
CREATE OR REPLACE TABLE ice.write_v2_overwrite_dynamic.dst (id bigint, amount double, kind string) USING iceberg PARTITIONED BY (kind);
SET spark.sql.sources.partitionOverwriteMode = dynamic;
INSERT OVERWRITE ice.write_v2_overwrite_dynamic.dst SELECT id, amount, kind FROM src WHERE amount > 0;
SET spark.sql.sources.partitionOverwriteMode = static;
