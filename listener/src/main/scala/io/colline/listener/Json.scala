package io.colline.listener

import java.nio.charset.StandardCharsets

import scala.collection.mutable.ArrayBuffer

/**
 * A tiny mutable JSON tree and writer. Hand-rolled on purpose: no dependency on the Jackson or
 * json4s version of the Spark line the jar runs on.
 */
private[listener] sealed trait J

private[listener] object J {
  final case class Str(v: String) extends J
  final case class Num(v: Long) extends J
  final case class Bool(v: Boolean) extends J
  case object Null extends J

  final class Arr extends J {
    val items: ArrayBuffer[J] = new ArrayBuffer[J]()
    def add(j: J): Arr = { items += j; this }
    def isEmpty: Boolean = items.isEmpty
  }

  /** Insertion-ordered object; `put` replaces an existing key in place. */
  final class Obj extends J {
    val fields: ArrayBuffer[(String, J)] = new ArrayBuffer[(String, J)]()
    def put(k: String, v: J): Obj = {
      // a plain loop: `put` runs for every field of every event (indexWhere's closure cost ~15 % of a build)
      val n = fields.length
      var i = 0
      while (i < n && fields(i)._1 != k) i += 1
      if (i < n) fields(i) = (k, v) else fields += ((k, v))
      this
    }
    def put(k: String, v: String): Obj = put(k, if (v == null) Null else Str(v))
    def put(k: String, v: Long): Obj = put(k, Num(v))
    def put(k: String, v: Boolean): Obj = put(k, Bool(v))
    def get(k: String): Option[J] = fields.find(_._1 == k).map(_._2)
    def isEmpty: Boolean = fields.isEmpty
  }

  /** An index into `nodes` that is known only after the whole event is laid out. */
  final class Ref extends J { var id: Int = -1 }

  def obj(kv: (String, J)*): Obj = { val o = new Obj; kv.foreach { case (k, v) => o.put(k, v) }; o }
  def arr(items: Iterable[J]): Arr = {
    val a = new Arr
    a.items ++= items
    a
  }
  def strs(items: Iterable[String]): Arr = {
    val a = new Arr
    val it = items.iterator
    while (it.hasNext) { val s = it.next(); a.items += (if (s == null) Null else Str(s)) }
    a
  }
  def str(s: String): J = if (s == null) Null else Str(s)
  def opt(s: Option[String]): J = s.map(Str).getOrElse(Null)

  def toBytes(j: J, pretty: Boolean = false): Array[Byte] =
    render(j, pretty).getBytes(StandardCharsets.UTF_8)

  def render(j: J, pretty: Boolean = false): String = {
    val sb = new java.lang.StringBuilder(4096)
    write(j, sb, pretty, 0)
    if (pretty) sb.append('\n')
    sb.toString
  }

  private def newline(sb: java.lang.StringBuilder, pretty: Boolean, depth: Int): Unit =
    if (pretty) {
      sb.append('\n')
      var i = 0
      while (i < depth) { sb.append("  "); i += 1 }
    }

  private def write(j: J, sb: java.lang.StringBuilder, pretty: Boolean, depth: Int): Unit = j match {
    case Str(v) => quote(v, sb)
    case Num(v) => sb.append(v)
    case Bool(v) => sb.append(v)
    case Null => sb.append("null")
    case r: Ref => if (r.id >= 0) sb.append(r.id) else sb.append("null")
    case a: Arr =>
      if (a.items.isEmpty) sb.append("[]")
      else {
        // arrays of scalars stay on one line even when pretty
        val flat = !pretty || a.items.forall(i => !i.isInstanceOf[Obj] && !i.isInstanceOf[Arr])
        sb.append('[')
        var first = true
        a.items.foreach { i =>
          if (!first) { sb.append(','); if (flat && pretty) sb.append(' ') }
          if (!flat) newline(sb, pretty, depth + 1)
          write(i, sb, pretty, depth + 1)
          first = false
        }
        if (!flat) newline(sb, pretty, depth)
        sb.append(']')
      }
    case o: Obj =>
      if (o.fields.isEmpty) sb.append("{}")
      else {
        sb.append('{')
        var first = true
        o.fields.foreach { case (k, v) =>
          if (!first) sb.append(',')
          newline(sb, pretty, depth + 1)
          quote(k, sb)
          sb.append(':')
          if (pretty) sb.append(' ')
          write(v, sb, pretty, depth + 1)
          first = false
        }
        newline(sb, pretty, depth)
        sb.append('}')
      }
  }

  private val Hex = "0123456789abcdef".toCharArray

  /**
   * Appends `s` as a JSON string. Runs of characters that need no escape (nearly all of an event)
   * are appended in one call; only the rest goes character by character.
   */
  def quote(s: String, sb: java.lang.StringBuilder): Unit = {
    sb.append('"')
    val n = s.length
    var run = 0 // start of the pending run of plain characters
    var i = 0
    while (i < n) {
      val c = s.charAt(i)
      if (c >= 0x20 && c != '"' && c != '\\' && c < '\u2028') i += 1 // plain ASCII and most of the BMP
      else if (c >= 0x20 && c != '"' && c != '\\' && c != '\u2028' && c != '\u2029' &&
        (!Character.isSurrogate(c) || validSurrogate(s, i))) i += 1
      else {
        if (i > run) sb.append(s, run, i)
        c match {
          case '"' => sb.append("\\\"")
          case '\\' => sb.append("\\\\")
          case '\n' => sb.append("\\n")
          case '\r' => sb.append("\\r")
          case '\t' => sb.append("\\t")
          case '\b' => sb.append("\\b")
          case '\f' => sb.append("\\f")
          case _ =>
            sb.append("\\u").append(Hex((c >> 12) & 0xf)).append(Hex((c >> 8) & 0xf))
              .append(Hex((c >> 4) & 0xf)).append(Hex(c & 0xf))
        }
        i += 1
        run = i
      }
    }
    if (n > run) sb.append(s, run, n)
    sb.append('"')
  }

  private def validSurrogate(s: String, i: Int): Boolean = {
    val c = s.charAt(i)
    if (Character.isHighSurrogate(c)) i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))
    else i > 0 && Character.isHighSurrogate(s.charAt(i - 1))
  }
}
