package io.colline.listener.analyze

import org.apache.spark.sql.catalyst.TableIdentifier

import io.colline.listener.J

/**
 * Marks on an analyzed event: a table whose schema was inferred (Inference) says so,
 * `"inferred": true` on its dataset (docs/event-format.md); its placeholder column (a table of
 * which the statement reads no column) is left out of every node's output, as it is no column of
 * the table.
 */
private[listener] object Marks {
  def inferred(event: J.Obj, inference: Inference): Unit = {
    val nodes = event.get("nodes").collect { case a: J.Arr => a.items.collect { case o: J.Obj => o } }.getOrElse(Nil)
    val placeholders = scala.collection.mutable.Set.empty[Long]
    def dataset(d: J.Obj): Boolean = {
      val inferred = (d.get("kind"), d.get("catalog"), d.get("namespace"), d.get("name")) match {
        case (Some(J.Str("table")), cat, Some(ns: J.Arr), Some(J.Str(name))) if cat.forall(_ == J.Str(Registrar.SessionCatalog)) =>
          ns.items.toList match { // a List on Scala 2.12 and 2.13 (an ArrayBuffer is no immutable Seq on 2.13)
            case List(J.Str(db)) => inference.inferred(TableIdentifier(name, Some(db)))
            case _ => false
          }
        case _ => false
      }
      if (inferred) d.put("inferred", true)
      inferred
    }
    nodes.foreach { n =>
      val read = n.get("dataset").collect { case d: J.Obj => dataset(d) }.getOrElse(false)
      n.get("write").collect { case w: J.Obj => w.get("dataset").collect { case d: J.Obj => dataset(d) } }
      if (read) outputs(n).foreach { a =>
        (a.get("name"), a.get("exprId")) match {
          case (Some(J.Str(Inference.Placeholder)), Some(J.Num(id))) => placeholders += id
          case _ =>
        }
      }
    }
    if (placeholders.nonEmpty) nodes.foreach(n => n.get("output").foreach {
      case a: J.Arr => a.items --= a.items.filter {
        case o: J.Obj => o.get("exprId").exists { case J.Num(id) => placeholders(id); case _ => false }
        case _ => false
      }
      case _ =>
    })
  }

  private def outputs(n: J.Obj): Seq[J.Obj] =
    n.get("output").collect { case a: J.Arr => a.items.collect { case o: J.Obj => o }.toSeq }.getOrElse(Nil)
}
