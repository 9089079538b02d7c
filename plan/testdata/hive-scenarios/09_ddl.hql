-- DDL through the metastore listener: add and replace columns, truncate, rename, drop.
CREATE TABLE hshop.scratch (id INT, note STRING);
ALTER TABLE hshop.scratch ADD COLUMNS (extra STRING);
ALTER TABLE hshop.scratch REPLACE COLUMNS (id INT, extra STRING);
INSERT INTO hshop.scratch VALUES (1, 'x');
TRUNCATE TABLE hshop.scratch;
ALTER TABLE hshop.scratch RENAME TO hshop.scratch_renamed;
DROP TABLE hshop.scratch_renamed;
DROP VIEW hshop.paid_view;
