package io.colline.listener

import java.util.Properties

import scala.util.Try

private[listener] object Versions {
  private lazy val props: Properties = {
    val p = new Properties()
    Try {
      val in = getClass.getResourceAsStream("/colline-listener.properties")
      if (in != null) try p.load(in) finally in.close()
    }
    p
  }

  lazy val listener: String = Option(props.getProperty("version")).getOrElse("unknown")
  lazy val spark: String = Try(org.apache.spark.SPARK_VERSION).getOrElse("unknown")
  lazy val scalaBinary: String = {
    val v = scala.util.Properties.versionNumberString
    v.split('.').take(2).mkString(".")
  }

  /**
   * Whether Spark executes commands together (a multi-insert: a Union of inserts) as one
   * execution, reported once ("multi-commands"), as Spark 4 does (SPARK-48817), rather than each
   * command as an execution of its own, as Spark 3 does. The analyzer publishes what Spark runs.
   */
  lazy val unionOfCommandsIsOneExecution: Boolean = Try(spark.takeWhile(_.isDigit).toInt >= 4).getOrElse(true)
}
