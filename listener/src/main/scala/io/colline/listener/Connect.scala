package io.colline.listener

import scala.util.Try

/**
 * Who ran an execution through Spark Connect, from what Spark puts on the listener bus (3.4+;
 * the execution's job tags from 3.5): the user and session of the operation, its id, and the
 * client's own description of itself. The user id is whatever the client sent (`user_id` of the
 * connection string, else the client's OS user): Spark Connect does not authenticate it.
 */
private[listener] final case class ConnectOperation(
    userId: String,
    sessionId: String,
    operationId: String,
    userName: Option[String] = None,
    clientType: Option[String] = None) {

  /** `query.connect` of the event (docs/event-format.md). */
  def json: J.Obj = {
    val o = J.obj("userId" -> J.Str(userId))
    userName.foreach(u => o.put("userName", u))
    o.put("sessionId", sessionId).put("operationId", operationId)
    clientType.foreach(c => o.put("clientType", c))
    o
  }
}

private[listener] object Connect {
  /** The longest value kept of each field (a client may send anything). */
  val MaxLength = 256

  /**
   * The job tag Spark Connect sets on every job of an operation (ExecuteHolder):
   * `SparkConnect_OperationTag_User_{userId}_Session_{sessionId}_Operation_{operationId}`. Session
   * and operation ids are UUIDs; the user id may hold anything, underscores included.
   */
  private val OperationTag = "^SparkConnect_OperationTag_User_(.*)_Session_([^_]+)_Operation_([^_]+)$".r

  /** The Connect operation named by one of an execution's job tags, with that tag, if any. */
  def fromTags(tags: Iterable[String]): Option[(String, ConnectOperation)] =
    tags.iterator.map(t => operationTag(t).map(t -> _)).collectFirst { case Some(x) => x }

  /** The operation a job tag of Spark Connect's names. */
  def operationTag(tag: String): Option[ConnectOperation] = tag match {
    case OperationTag(user, session, operation) => Some(ConnectOperation(cap(user), cap(session), cap(operation)))
    case _ => None
  }

  /** `SparkListenerSQLExecutionStart.jobTags` (3.5+; absent before, so read by name). */
  def jobTags(start: AnyRef): Seq[String] = Reflect.call(start, "jobTags").collect {
    case s: scala.collection.Iterable[_] => s.iterator.map(String.valueOf).toSeq
  }.getOrElse(Nil)

  /**
   * The operation a `SparkListenerConnectOperationStarted` (spark-connect, present only on a
   * Connect server) announces, keyed by its job tag: user id and name, session, operation, and
   * the client type of its request (`ExecutePlanRequest.client_type`, on the live bus only).
   */
  def started(e: AnyRef): Option[(String, ConnectOperation)] =
    if (!SparkClasses.is(e, SparkClasses.ConnectOperationStarted)) None
    else for {
      tag <- Reflect.string(e, "jobTag")
      op <- operationTag(tag)
    } yield {
      val name = Reflect.string(e, "userName").filter(_.nonEmpty).map(cap)
      val client = Reflect.call(e, "planRequest").collect { case Some(r: AnyRef) => r }
        .flatMap(r => Reflect.string(r, "getClientType")).filter(_.nonEmpty).map(cap)
      tag -> op.copy(userName = name, clientType = client)
    }

  private def cap(s: String): String = if (s.length <= MaxLength) s else s.substring(0, MaxLength)
}
