-- ALTER TABLE ... RENAME TO: lineage of the old name is reachable from the new one
DROP DATABASE IF EXISTS ddl_rename CASCADE;
CREATE DATABASE ddl_rename;
USE ddl_rename;
CREATE TABLE old_name (id bigint) USING parquet;
ALTER TABLE old_name RENAME TO new_name;
