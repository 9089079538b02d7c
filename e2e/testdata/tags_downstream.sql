-- The Spark half of the tags end-to-end test (e2e/tags_test.go, TestTagsSparkDBT), run after
-- dev/dbt/lake.sql in the same session. lake.customers.name is tagged in the dbt project
-- (dev/dbt/shop: its source's column tags and meta, read from dbt's manifest.json); this job
-- copies it, hashes it (sha2: the tag stops there) and copies the hash on. mart_tags.notes
-- tags a column in Spark's catalog itself, by a comment (#pii=note, docs/tags.md).
DROP DATABASE IF EXISTS mart_tags CASCADE;
CREATE DATABASE mart_tags;
CREATE TABLE mart_tags.customer_contacts USING parquet AS
  SELECT customer_id, name AS customer_name, sha2(name, 256) AS name_hash, lower(country) AS country
  FROM lake.customers;
CREATE TABLE mart_tags.hash_copy USING parquet AS
  SELECT customer_id, name_hash FROM mart_tags.customer_contacts;
CREATE TABLE mart_tags.notes (customer_id bigint, note string COMMENT 'free text from the call centre #pii=note') USING parquet;
INSERT INTO mart_tags.notes VALUES (10, 'call back on Monday');
CREATE TABLE mart_tags.note_digest USING parquet AS
  SELECT customer_id, note, md5(note) AS note_md5 FROM mart_tags.notes;
