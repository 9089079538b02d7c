package io.colline.listener.analyze

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/** A request's analysis went past its deadline: it stops where it is. */
private[listener] final class DeadlineExceeded(val seconds: Long)
  extends RuntimeException(s"the analysis did not finish within its deadline of $seconds s")

/**
 * The deadline of the analysis running on this thread. Nothing runs, so there is no job to cancel:
 * the analysis stops itself. `check` is called between statements and, through a rule injected
 * into Spark's analyzer (`inject`), at every application of the resolution batch and of the
 * checks, nested analyses (views) included: a statement whose analysis would not end (views
 * expanding views, a plan that keeps growing) stops within one rule of its deadline.
 */
private[listener] object Deadline {
  private final case class Current(atNanos: Long, seconds: Long)
  private val current = new ThreadLocal[Current]

  /** Runs f with a deadline `seconds` from now on this thread. */
  def within[T](seconds: Long)(f: => T): T = {
    current.set(Current(System.nanoTime() + seconds * 1000000000L, seconds))
    try f finally current.remove()
  }

  def expired: Boolean = {
    val c = current.get
    c != null && System.nanoTime() - c.atNanos > 0
  }

  def check(): Unit = {
    val c = current.get
    if (c != null && System.nanoTime() - c.atNanos > 0) throw new DeadlineExceeded(c.seconds)
  }

  /** The analyzer's hooks: a resolution rule and a check rule that change nothing and call `check`. */
  def inject(ext: SparkSessionExtensions): Unit = {
    ext.injectResolutionRule(_ => CheckRule)
    ext.injectCheckRule(_ => (_: LogicalPlan) => check())
  }

  private object CheckRule extends Rule[LogicalPlan] {
    override def apply(plan: LogicalPlan): LogicalPlan = { check(); plan }
  }
}
