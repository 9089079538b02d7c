package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Reflection over classes that may be absent from the driver's classpath (Hive, Kafka) or that
 * are `private[sql]` (JDBC), named in SparkClasses. Each kind lives in one object; every call is defensive.
 */
private[listener] object Reflect {
  def call(o: AnyRef, method: String): Option[AnyRef] =
    if (o == null) None
    else Try(o.getClass.getMethod(method).invoke(o)).toOption.flatMap(Option(_))

  def field(o: AnyRef, name: String): Option[AnyRef] = {
    if (o == null) return None
    var c: Class[_] = o.getClass
    while (c != null) {
      val f = Try(c.getDeclaredField(name)).toOption
      if (f.isDefined) {
        return Try { f.get.setAccessible(true); f.get.get(o) }.toOption.flatMap(Option(_))
      }
      c = c.getSuperclass
    }
    None
  }

  def string(o: AnyRef, method: String): Option[String] = call(o, method).collect { case s: String => s }
  def bool(o: AnyRef, method: String): Option[Boolean] =
    call(o, method).collect { case b: java.lang.Boolean => b.booleanValue() }
  def strings(o: AnyRef, method: String): Seq[String] =
    call(o, method).collect { case s: Seq[_] => s.map(String.valueOf) }.getOrElse(Nil)
  def plan(o: AnyRef, method: String): Option[LogicalPlan] =
    call(o, method).collect { case p: LogicalPlan => p }

  /** A `scala.collection.Map[String, String]` (CaseInsensitiveMap included) as a lookup. */
  def stringMap(o: AnyRef): Option[String => Option[String]] = o match {
    case m: scala.collection.Map[_, _] =>
      val mm = m.asInstanceOf[scala.collection.Map[String, String]]
      Some(k => Try(mm.get(k)).toOption.flatten.orElse(
        mm.collectFirst { case (kk, v) if kk != null && kk.equalsIgnoreCase(k) => v }))
    case _ => None
  }
}

/** spark-hive classes: present only with Hive support. */
private[listener] object HiveClasses {
  def isInsert(p: LogicalPlan): Boolean = SparkClasses.is(p, SparkClasses.InsertIntoHiveTable)
  def isCtas(p: LogicalPlan): Boolean = SparkClasses.CreateHiveTableAsSelect(p.getClass.getName)
  def isInsertDir(p: LogicalPlan): Boolean = SparkClasses.is(p, SparkClasses.InsertIntoHiveDirCommand)

  def table(p: LogicalPlan): Option[CatalogTable] =
    Reflect.call(p, "table").orElse(Reflect.call(p, "tableDesc")).collect { case t: CatalogTable => t }
  def overwrite(p: LogicalPlan): Boolean = Reflect.bool(p, "overwrite").getOrElse(false)
  def outputColumnNames(p: LogicalPlan): Seq[String] = Reflect.strings(p, "outputColumnNames")
  def query(p: LogicalPlan): Option[LogicalPlan] = Reflect.plan(p, "query")
  def mode(p: LogicalPlan): Option[AnyRef] = Reflect.call(p, "mode")
  def storage(p: LogicalPlan): Option[CatalogStorageFormat] =
    Reflect.call(p, "storage").collect { case s: CatalogStorageFormat => s }
}

/** JDBC: `JDBCRelation` is private[sql]; `JdbcRelationProvider` writes through options. */
private[listener] object JdbcClasses {
  /** (url, table, query) of a JDBCRelation. */
  def relation(r: AnyRef): Option[(Option[String], Option[String], Option[String])] =
    if (!SparkClasses.is(r, SparkClasses.JdbcRelation)) None
    else Try {
      val opts = Reflect.call(r, "jdbcOptions").flatMap(o => Reflect.call(o, "parameters"))
        .flatMap(Reflect.stringMap)
      opts.map(get => (get("url"), get("dbtable"), get("query")))
    }.toOption.flatten
}

/** spark-sql-kafka-0-10: present only when the Kafka connector is on the classpath. */
private[listener] object KafkaClasses {
  /** (servers, topics, pattern) of a batch KafkaRelation, read from its private `sourceOptions`. */
  def relation(r: AnyRef): Option[(Option[String], Seq[String], Option[String])] =
    if (!SparkClasses.is(r, SparkClasses.KafkaRelation)) None
    else Try {
      Reflect.field(r, "sourceOptions").flatMap(Reflect.stringMap).map { get =>
        val topics = get("subscribe").map(_.split(",").map(_.trim).filter(_.nonEmpty).toSeq)
          .orElse(get("assign").map(assignTopics))
          .getOrElse(Nil)
        (get("kafka.bootstrap.servers"), topics, get("subscribepattern"))
      }
    }.toOption.flatten

  /** Topic names of an `assign` JSON such as `{"t1":[0,1],"t2":[0]}`. */
  def assignTopics(json: String): Seq[String] =
    "\"((?:[^\"\\\\]|\\\\.)*)\"\\s*:".r.findAllMatchIn(json).map(_.group(1)).toSeq.distinct
}
