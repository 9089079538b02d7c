-- UPDATE … SET … WHERE and DELETE FROM … WHERE on a Delta table (Delta's own UpdateCommand and DeleteCommand), and a DELETE of every row
-- connectors: delta
DROP DATABASE IF EXISTS delta_update_delete CASCADE;
CREATE DATABASE delta_update_delete;
USE delta_update_delete;
CREATE TABLE t (id bigint, name string, kind string, amount double) USING delta;
INSERT INTO t VALUES (1, 'a', 'buy', 1.0), (2, 'b', 'sell', 2.0);
UPDATE t SET amount = amount * 2, name = upper(name) WHERE kind = 'buy';
DELETE FROM t WHERE amount < 0 AND kind <> 'keep';
DELETE FROM t;
