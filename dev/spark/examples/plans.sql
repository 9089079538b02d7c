-- Exercises the plan shapes the listener must serialize (run with --continue: the last statement fails on purpose).
--   COLLINE_CAPTURE_DIR=/tmp/capture-plans dev/spark-sql --continue dev/spark/examples/plans.sql
CREATE DATABASE IF NOT EXISTS lab;
CREATE TABLE lab.events (id bigint, user_id bigint, kind string, amount double, ts timestamp, tags array<string>) USING parquet;
INSERT INTO lab.events VALUES
  (1, 1, 'buy', 10.0, TIMESTAMP '2024-01-01 10:00:00', array('a', 'b')),
  (2, 1, 'view', 0.0, TIMESTAMP '2024-01-01 11:00:00', array('b')),
  (3, 2, 'buy', 25.5, TIMESTAMP '2024-01-02 09:00:00', array('c'));

-- datasource CTAS (3.4+: outer CTAS with nested query + inner InsertIntoHadoopFsRelationCommand)
CREATE TABLE lab.buys USING parquet AS SELECT id, user_id, amount FROM lab.events WHERE kind = 'buy';

-- Hive serde table, Hive CTAS, insert into a Hive table
CREATE TABLE lab.users_txt (user_id bigint, email string) STORED AS TEXTFILE;
INSERT INTO lab.users_txt VALUES (1, 'a@example.com'), (2, 'b@example.com');
CREATE TABLE lab.user_spend STORED AS TEXTFILE AS
SELECT u.user_id, u.email, sum(b.amount) AS spend FROM lab.users_txt u LEFT JOIN lab.buys b ON u.user_id = b.user_id GROUP BY u.user_id, u.email;

-- partitioned table with a static partition
CREATE TABLE lab.daily (user_id bigint, amount double, day string) USING parquet PARTITIONED BY (day);
INSERT INTO lab.daily PARTITION (day = '2024-01-01') SELECT user_id, amount FROM lab.events WHERE to_date(ts) = DATE '2024-01-01';
INSERT OVERWRITE TABLE lab.daily PARTITION (day) SELECT user_id, amount, CAST(to_date(ts) AS string) FROM lab.events;

-- views: persistent and temporary
CREATE VIEW lab.big_buys AS SELECT id, amount * 2 AS doubled FROM lab.buys WHERE amount > 20;
CREATE TEMPORARY VIEW recent AS SELECT * FROM lab.events WHERE ts > TIMESTAMP '2024-01-01 10:30:00';
CREATE TABLE lab.from_views (id bigint, doubled double, kind string) USING parquet;
INSERT INTO lab.from_views SELECT v.id, v.doubled, r.kind FROM lab.big_buys v JOIN recent r ON v.id = r.id;

-- CTE, union, window, generate, grouping sets, subqueries
CREATE TABLE lab.shapes (k string, v double, n bigint) USING parquet;
INSERT INTO lab.shapes
WITH b AS (SELECT user_id, amount FROM lab.events WHERE kind = 'buy')
SELECT CAST(user_id AS string), amount, 1L FROM b
UNION ALL
SELECT kind, sum(amount) OVER (PARTITION BY user_id ORDER BY ts), row_number() OVER (PARTITION BY user_id ORDER BY ts) FROM lab.events
UNION ALL
SELECT tag, 0.0, count(*) FROM lab.events LATERAL VIEW explode(tags) t AS tag GROUP BY tag
UNION ALL
SELECT coalesce(kind, 'all'), sum(amount), grouping_id() FROM lab.events GROUP BY GROUPING SETS ((kind), ())
UNION ALL
SELECT kind, (SELECT max(amount) FROM lab.buys), 0L FROM lab.events e WHERE e.user_id IN (SELECT user_id FROM lab.buys) AND EXISTS (SELECT 1 FROM lab.users_txt u WHERE u.user_id = e.user_id);

-- a CTE referenced twice (WithCTE / CTERelationDef / CTERelationRef)
INSERT INTO lab.shapes
WITH c AS (SELECT kind, amount FROM lab.events)
SELECT a.kind, a.amount, 1L FROM c a JOIN c b ON a.kind = b.kind;

-- path read and path write
INSERT OVERWRITE DIRECTORY '/tmp/colline-plans-out' USING parquet SELECT id, amount FROM lab.events;
CREATE TABLE lab.from_path USING parquet AS SELECT * FROM parquet.`/tmp/colline-plans-out`;

-- JDBC (embedded Derby, credentials in the URL must not leak)
CREATE TABLE lab.jdbc_users USING jdbc OPTIONS (url 'jdbc:derby:memory:colline;create=true;user=app;password=s3cret', dbtable 'JUSERS') AS SELECT user_id, email FROM lab.users_txt;
INSERT INTO lab.jdbc_users SELECT 3, 'c@example.com';
CREATE TEMPORARY VIEW jusers USING jdbc OPTIONS (url 'jdbc:derby:memory:colline;user=app;password=s3cret', dbtable 'JUSERS');
CREATE TABLE lab.from_jdbc USING parquet AS SELECT * FROM jusers;

-- noise that must be dropped
SHOW TABLES IN lab;
DESCRIBE TABLE lab.events;
SET spark.sql.shuffle.partitions = 2;
SELECT count(*) FROM lab.events;

-- a failing write (onFailure)
INSERT INTO lab.shapes SELECT raise_error('boom'), 0.0, 0L;
