-- A job launched by a scheduler that passes its run to Spark as Airflow's OpenLineage provider
-- does (spark.openlineage.parentJobNamespace, parentJobName, parentRunId and the rootParent* keys
-- of the DAG run): every event carries them as `parent` (docs/event-format.md), and the consumer
-- makes each run CHILD_OF the task's run, CHILD_OF the DAG run (docs/listener.md, "The scheduler's run").
-- conf: spark.openlineage.parentJobNamespace=airflow spark.openlineage.parentJobName=nightly.load_orders spark.openlineage.parentRunId=0199a1f2-5c3e-7d41-9a57-3f1f1d0b9c11 spark.openlineage.rootParentJobNamespace=airflow spark.openlineage.rootParentJobName=nightly spark.openlineage.rootParentRunId=0199a1f2-5c3e-7d41-9a57-3f1f1d0b9c10
DROP DATABASE IF EXISTS scheduler_parent CASCADE;
CREATE DATABASE scheduler_parent;
CREATE TABLE scheduler_parent.orders (order_id INT, amount DOUBLE, status STRING) USING parquet;
INSERT INTO scheduler_parent.orders VALUES (1, 12.5, 'paid'), (2, 7.0, 'open');
CREATE TABLE scheduler_parent.paid USING parquet AS SELECT order_id, amount FROM scheduler_parent.orders WHERE status = 'paid';
