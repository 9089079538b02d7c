package io.colline.listener

import java.util.concurrent.atomic.AtomicLong

import org.slf4j.LoggerFactory

/** At most one WARN line per interval per key; the suppressed count is reported with the next one. */
private[listener] final class RateLimitedLog(intervalMs: Long) {
  private val log = LoggerFactory.getLogger("io.colline.listener.CollineListener")
  private val last = new java.util.concurrent.ConcurrentHashMap[String, AtomicLong]()
  private val suppressed = new java.util.concurrent.ConcurrentHashMap[String, AtomicLong]()

  def warn(key: String, msg: => String, t: Throwable = null): Unit = try {
    val now = System.currentTimeMillis()
    val l = last.computeIfAbsent(key, RateLimitedLog.Zero)
    val s = suppressed.computeIfAbsent(key, RateLimitedLog.Zero)
    val prev = l.get
    if (now - prev >= intervalMs && l.compareAndSet(prev, now)) {
      val n = s.getAndSet(0L)
      val text = "colline: " + msg + (if (n > 0) s" ($n similar messages suppressed)" else "")
      log.warn(Causes.append(text, t))
    } else s.incrementAndGet()
  } catch { case _: Throwable => }

  def info(msg: => String): Unit = try log.info("colline: " + msg) catch { case _: Throwable => }
}

private[listener] object RateLimitedLog {
  /** A new counter at 0 (an explicit Function: Scala 2.11 has no SAM conversion). */
  val Zero: java.util.function.Function[String, AtomicLong] = new java.util.function.Function[String, AtomicLong] {
    def apply(k: String): AtomicLong = new AtomicLong(0L)
  }
}

/** An error with its causes on one line: the root cause is what says why (a class missing, a refused connection). */
private[listener] object Causes {
  /**
   * `text: outer; caused by: inner; caused by: root`, at most 8 deep; `text` alone when `t` is null.
   * Each message goes through `Redact.secrets`: an exception may quote a URL or an option with a
   * credential, and the driver's log is read by more people than the job's owner.
   */
  def append(text: String, t: Throwable): String = {
    if (t == null) return text
    val seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[Throwable, java.lang.Boolean])
    text + ": " + Iterator.iterate(t)(_.getCause).takeWhile(c => c != null && seen.add(c)).take(8).map { c =>
      val m = c.getLocalizedMessage
      if (m == null) c.getClass.getName else c.getClass.getName + ": " + Redact.secrets(m)
    }.mkString("; caused by: ")
  }
}
