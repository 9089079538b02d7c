package io.colline.listener

/** Spark Connect's operation tag (Connect) and the scheduler's parent run (ParentRun). */
class SessionTest extends munit.FunSuite {
  private val session = "4cd9df93-6fcd-4e61-b5b3-625d6fb9d756"
  private val operation = "8f2ca349-614c-41d3-a583-e1e4736989ba"

  test("a Connect operation tag names the user, the session and the operation") {
    val tag = s"SparkConnect_OperationTag_User_alice_Session_${session}_Operation_$operation"
    assertEquals(Connect.operationTag(tag), Some(ConnectOperation("alice", session, operation)))
    assertEquals(Connect.fromTags(Seq("spark-job-tag", tag)).map(_._2.userId), Some("alice"))
  }

  test("a user id with underscores, and one that looks like a tag itself, is kept whole") {
    val user = "svc_etl_Session_x_Operation_y"
    val tag = s"SparkConnect_OperationTag_User_${user}_Session_${session}_Operation_$operation"
    assertEquals(Connect.operationTag(tag).map(_.userId), Some(user))
  }

  test("other tags name no operation; a long user id is cut") {
    assertEquals(Connect.fromTags(Seq("SparkConnect_SessionTag_User_a_Session_b_Tag_c", "nightly")), None)
    val long = "u" * 1000
    val tag = s"SparkConnect_OperationTag_User_${long}_Session_${session}_Operation_$operation"
    assertEquals(Connect.operationTag(tag).map(_.userId.length), Some(Connect.MaxLength))
  }

  test("query.connect carries what is known, nothing else") {
    val op = ConnectOperation("alice", session, operation, clientType = Some("_SPARK_CONNECT_PYTHON spark/4.1.1"))
    assertEquals(new String(J.toBytes(op.json), "UTF-8"),
      s"""{"userId":"alice","sessionId":"$session","operationId":"$operation","clientType":"_SPARK_CONNECT_PYTHON spark/4.1.1"}""")
  }

  private def from(kv: (String, String)*) = {
    val m = kv.toMap
    val problems = Seq.newBuilder[String]
    (ParentRun.from(m.get, problems += _), problems.result())
  }

  test("OpenLineage's parent keys, as Airflow sets them, with the root run") {
    val (p, problems) = from(
      "spark.openlineage.parentJobNamespace" -> "airflow", "spark.openlineage.parentJobName" -> "dag.task",
      "spark.openlineage.parentRunId" -> "r1", "spark.openlineage.rootParentJobNamespace" -> "airflow",
      "spark.openlineage.rootParentJobName" -> "dag", "spark.openlineage.rootParentRunId" -> "r0")
    assertEquals(problems, Nil)
    assertEquals(p, Some(ParentRun("airflow", "dag.task", "r1", Some(ParentRun("airflow", "dag", "r0")))))
  }

  test("colline's keys win over OpenLineage's") {
    val (p, _) = from("spark.colline.parent.namespace" -> "ds", "spark.colline.parent.job" -> "wf.task",
      "spark.colline.parent.runId" -> "42", "spark.openlineage.parentJobNamespace" -> "airflow",
      "spark.openlineage.parentJobName" -> "dag.task", "spark.openlineage.parentRunId" -> "r1")
    assertEquals(p, Some(ParentRun("ds", "wf.task", "42")))
  }

  test("an incomplete parent is none, and the problem names the missing key") {
    val (p, problems) = from("spark.openlineage.parentRunId" -> "r1")
    assertEquals(p, None)
    assertEquals(problems.size, 1)
    assert(problems.head.contains("spark.openlineage.parentJobNamespace, spark.openlineage.parentJobName not set"), problems.head)
    assertEquals(from()._1, None)
  }

  test("the event's parent") {
    assertEquals(new String(J.toBytes(ParentRun("airflow", "dag.task", "r1", Some(ParentRun("airflow", "dag", "r0"))).json), "UTF-8"),
      """{"namespace":"airflow","name":"dag.task","runId":"r1","root":{"namespace":"airflow","name":"dag","runId":"r0"}}""")
  }
}
