package io.colline.listener

import org.apache.spark.sql.SparkSession

/** Structured Streaming is not published on Spark 2.4 (its plans are other classes): batch only. */
private[listener] object Streaming {
  def register(session: SparkSession, pub: Publisher): Unit = ()
  /** No streaming runs to find (MicroBatches). */
  def discover(): Unit = ()
}
