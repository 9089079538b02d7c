package io.colline.listener

/**
 * Every Spark class the listener knows by name rather than by type, in one place: classes that
 * are optional on the driver (Hive, the Kafka connector, Delta Lake), `private[sql]` (JDBC), or absent from
 * some of the lines the listener is built for (dev/spark/lines). API differences that compile
 * differently per line are in `Compat` (src/main/spark33, src/main/spark34plus); nothing else
 * tests a Spark version.
 */
private[listener] object SparkClasses {
  private val Logical = "org.apache.spark.sql.catalyst.plans.logical."
  private val Hive = "org.apache.spark.sql.hive.execution."
  private val Kafka = "org.apache.spark.sql.kafka010."

  // ---- catalyst nodes that not every line has
  /** Row-level writes: `ReplaceData` (3.3+), `WriteDelta` (3.4+). */
  val RowLevelWrites: Set[String] = Set(Logical + "ReplaceData", Logical + "WriteDelta")
  /** MERGE's row instructions (3.4+; Keep/Split/Discard from 3.5). */
  val MergeRows: String = Logical + "MergeRows"
  /** Recursive CTEs (4.x). */
  val UnionLoop: String = Logical + "UnionLoop"
  val UnionLoopRef: String = Logical + "UnionLoopRef"

  /** Common expressions (4.x): `With(child, defs)`, its `CommonExpressionDef`s and their references (short names). */
  val CommonExpressionDef = "CommonExpressionDef"
  val CommonExpressionRef = "CommonExpressionRef"

  // ---- spark-hive: present only with Hive support
  val InsertIntoHiveTable: String = Hive + "InsertIntoHiveTable"
  val InsertIntoHiveDirCommand: String = Hive + "InsertIntoHiveDirCommand"
  val CreateHiveTableAsSelect: Set[String] =
    Set(Hive + "CreateHiveTableAsSelectCommand", Hive + "OptimizedCreateHiveTableAsSelectCommand")

  // ---- JDBC: private[sql]
  val JdbcRelation = "org.apache.spark.sql.execution.datasources.jdbc.JDBCRelation"
  val JdbcProvider = "org.apache.spark.sql.execution.datasources.jdbc.JdbcRelationProvider"

  // ---- spark-sql-kafka-0-10: present only with the Kafka connector
  val KafkaRelation: String = Kafka + "KafkaRelation"
  val KafkaProvider: String = Kafka + "KafkaSourceProvider"
  def isKafka(className: String): Boolean = className.startsWith(Kafka)

  // ---- delta-spark: present only with Delta Lake (3.x and 4.x keep these names)
  private val DeltaCommandsPkg = "org.apache.spark.sql.delta.commands."
  val DeltaMerge: String = DeltaCommandsPkg + "MergeIntoCommand"
  val DeltaUpdate: String = DeltaCommandsPkg + "UpdateCommand"
  val DeltaDelete: String = DeltaCommandsPkg + "DeleteCommand"

  // ---- spark-connect: present only on a Spark Connect server (3.4+)
  val ConnectOperationStarted = "org.apache.spark.sql.connect.service.SparkListenerConnectOperationStarted"

  // ---- Structured Streaming, by short name (the classes moved between packages across lines)
  val WriteToStream = "WriteToStream"
  val StreamSources: Set[String] = Set("StreamingRelation", "StreamingRelationV2", "StreamingExecutionRelation")
  val FileStreamSink = "FileStreamSink"
  val ForeachBatchSink = "ForeachBatchSink"

  /** Analyzer placeholders (unresolved relations and the like): not data. */
  val AnalysisPackage = "org.apache.spark.sql.catalyst.analysis."

  /**
   * Physical root nodes (`SparkPlanInfo.nodeName`, `Execute <command>` for commands) of an
   * execution that runs another execution as its write: the CTAS around its inner insert (3.4+),
   * inserts into directories and through data sources, v2 CTAS/RTAS around an `AppendData`.
   */
  val NestingWriteExecs: Seq[String] = Seq(
    "CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand", "CreateTableAsSelect",
    "ReplaceTableAsSelect", "InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand",
    "InsertIntoDataSourceCommand", "SaveIntoDataSourceCommand")
  def isNestingWriteExec(nodeName: String): Boolean = NestingWriteExecs.exists(nodeName.contains)

  /** Whether `o` is an instance of exactly the named class. */
  def is(o: AnyRef, name: String): Boolean = o != null && o.getClass.getName == name
}
