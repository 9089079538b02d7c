package io.colline.listener

import java.util.concurrent.atomic.AtomicLong

/** Counters of the listener, readable through `CollineListener.stats()`. */
private[listener] final class Metrics {
  val seen = new AtomicLong
  val enqueued = new AtomicLong
  val droppedQueueFull = new AtomicLong
  val droppedCommandResult = new AtomicLong
  val droppedNotCommand = new AtomicLong
  val droppedNoLineage = new AtomicLong
  /** nested writes (the inner insert of a CTAS, …): not published, the outer command's event carries their lineage */
  val droppedNested = new AtomicLong
  val droppedOversize = new AtomicLong
  val droppedKafkaDown = new AtomicLong
  val truncated = new AtomicLong
  val streamsPublished = new AtomicLong
  val built = new AtomicLong
  val published = new AtomicLong
  val sendErrors = new AtomicLong
  val fileErrors = new AtomicLong
  val internalErrors = new AtomicLong

  def snapshot: Map[String, Long] = Map(
    "seen" -> seen.get, "enqueued" -> enqueued.get, "droppedQueueFull" -> droppedQueueFull.get,
    "droppedCommandResult" -> droppedCommandResult.get, "droppedNotCommand" -> droppedNotCommand.get,
    "droppedNoLineage" -> droppedNoLineage.get, "droppedNested" -> droppedNested.get, "droppedOversize" -> droppedOversize.get,
    "droppedKafkaDown" -> droppedKafkaDown.get, "streams" -> streamsPublished.get,
    "truncated" -> truncated.get, "built" -> built.get, "published" -> published.get,
    "sendErrors" -> sendErrors.get, "fileErrors" -> fileErrors.get, "internalErrors" -> internalErrors.get)
}
