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

  /**
   * Insertion-ordered object; `put` replaces an existing key in place, `add` appends a key the
   * object does not have yet (what the event builder does for most fields: no search). Keys and
   * values are kept in two arrays, without a tuple per field.
   */
  final class Obj extends J {
    /**
     * Set on an object that one event holds at several places (a column in the output of every
     * node above it): it is scrubbed once and encoded once, and must not be changed for one place.
     */
    var shared: Boolean = false
    private var ks = new Array[String](8)
    private var vs = new Array[J](8)
    private var n = 0
    def size: Int = n
    def key(i: Int): String = ks(i)
    def value(i: Int): J = vs(i)
    def set(i: Int, v: J): Unit = vs(i) = v
    /** The fields in order (tests and tools; the writers read the arrays). */
    def fields: Seq[(String, J)] = (0 until n).map(i => ks(i) -> vs(i))
    def add(k: String, v: J): Obj = {
      if (n == ks.length) {
        ks = java.util.Arrays.copyOf(ks, n * 2)
        vs = java.util.Arrays.copyOf(vs, n * 2)
      }
      ks(n) = k
      vs(n) = v
      n += 1
      this
    }
    def put(k: String, v: J): Obj = {
      val i = indexOf(k)
      if (i >= 0) { vs(i) = v; this } else add(k, v)
    }
    def put(k: String, v: String): Obj = put(k, if (v == null) Null else Str(v))
    def put(k: String, v: Long): Obj = put(k, Num(v))
    def put(k: String, v: Boolean): Obj = put(k, Bool(v))
    def get(k: String): Option[J] = { val i = indexOf(k); if (i >= 0) Some(vs(i)) else None }
    def isEmpty: Boolean = n == 0
    private def indexOf(k: String): Int = {
      var i = 0
      while (i < n && ks(i) != k) i += 1
      if (i < n) i else -1
    }
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

  /**
   * The UTF-8 bytes of `j`: compact ones written straight into a byte buffer kept by the calling
   * thread (the publisher's), with no String in between; pretty ones through `render`. Both give
   * the bytes of `render(j, pretty).getBytes(UTF_8)` (JsonTest holds them to it).
   */
  def toBytes(j: J, pretty: Boolean = false): Array[Byte] =
    if (pretty) render(j, pretty).getBytes(StandardCharsets.UTF_8)
    else {
      val out = Out.get
      out.reset()
      out.value(j)
      val bytes = out.toArray
      out.release()
      bytes
    }

  /** A growable byte buffer that writes compact JSON; one per thread, shrunk after a large event. */
  private final class Out {
    private var buf = new Array[Byte](64 * 1024)
    private var len = 0
    /** Where each shared object's bytes are in `buf` (offset << 32 | length): written once, then copied. */
    private val written = new java.util.IdentityHashMap[Obj, java.lang.Long]()
    def reset(): Unit = { len = 0; written.clear() }
    def toArray: Array[Byte] = java.util.Arrays.copyOf(buf, len)
    def release(): Unit = if (buf.length > 4 * 1024 * 1024) buf = new Array[Byte](64 * 1024)
    private def room(k: Int): Unit = if (len + k > buf.length) buf = java.util.Arrays.copyOf(buf, math.max(buf.length * 2, len + k))
    private def byte(b: Int): Unit = { room(1); buf(len) = b.toByte; len += 1 }
    private def ascii(s: String): Unit = {
      val k = s.length
      room(k)
      var i = 0
      while (i < k) { buf(len + i) = s.charAt(i).toByte; i += 1 }
      len += k
    }

    def value(j: J): Unit = j match {
      case o: Obj if o.shared =>
        val at = written.get(o)
        if (at != null) {
          val from = (at.longValue >>> 32).toInt
          val n = at.longValue.toInt
          room(n)
          System.arraycopy(buf, from, buf, len, n)
          len += n
        } else {
          val from = len
          obj(o)
          written.put(o, (from.toLong << 32) | (len - from))
        }
      case o: Obj => obj(o)
      case Str(v) => quote(v)
      case Num(v) => ascii(java.lang.Long.toString(v))
      case Bool(v) => ascii(if (v) "true" else "false")
      case Null => ascii("null")
      case r: Ref => if (r.id >= 0) ascii(Integer.toString(r.id)) else ascii("null")
      case a: Arr =>
        byte('[')
        val items = a.items
        var i = 0
        while (i < items.length) {
          if (i > 0) byte(',')
          value(items(i))
          i += 1
        }
        byte(']')
    }

    private def obj(o: Obj): Unit = {
      byte('{')
      var i = 0
      while (i < o.size) {
        if (i > 0) byte(',')
        quote(o.key(i))
        byte(':')
        value(o.value(i))
        i += 1
      }
      byte('}')
    }

    /** `J.quote`, encoded as UTF-8: the same escapes, then each character's bytes. */
    def quote(s: String): Unit = {
      val n = s.length
      room(n + 2)
      buf(len) = '"'
      len += 1
      var i = 0
      while (i < n) {
        val c = s.charAt(i)
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
          if (len == buf.length) room(1)
          buf(len) = c.toByte
          len += 1
        } else if (c >= 0x20 && c != '"' && c != '\\' && c != '\u2028' && c != '\u2029' &&
          (!Character.isSurrogate(c) || validSurrogate(s, i))) {
          if (Character.isHighSurrogate(c)) { // a valid pair: one code point, four bytes
            val cp = Character.toCodePoint(c, s.charAt(i + 1))
            room(4)
            buf(len) = (0xf0 | (cp >> 18)).toByte
            buf(len + 1) = (0x80 | ((cp >> 12) & 0x3f)).toByte
            buf(len + 2) = (0x80 | ((cp >> 6) & 0x3f)).toByte
            buf(len + 3) = (0x80 | (cp & 0x3f)).toByte
            len += 4
            i += 1
          } else if (c < 0x800) {
            room(2)
            buf(len) = (0xc0 | (c >> 6)).toByte
            buf(len + 1) = (0x80 | (c & 0x3f)).toByte
            len += 2
          } else {
            room(3)
            buf(len) = (0xe0 | (c >> 12)).toByte
            buf(len + 1) = (0x80 | ((c >> 6) & 0x3f)).toByte
            buf(len + 2) = (0x80 | (c & 0x3f)).toByte
            len += 3
          }
        } else c match {
          case '"' => ascii("\\\"")
          case '\\' => ascii("\\\\")
          case '\n' => ascii("\\n")
          case '\r' => ascii("\\r")
          case '\t' => ascii("\\t")
          case '\b' => ascii("\\b")
          case '\f' => ascii("\\f")
          case _ =>
            room(6)
            buf(len) = '\\'
            buf(len + 1) = 'u'
            buf(len + 2) = Hex((c >> 12) & 0xf).toByte
            buf(len + 3) = Hex((c >> 8) & 0xf).toByte
            buf(len + 4) = Hex((c >> 4) & 0xf).toByte
            buf(len + 5) = Hex(c & 0xf).toByte
            len += 6
        }
        i += 1
      }
      byte('"')
    }
  }

  private object Out {
    private val local = new ThreadLocal[Out] { override def initialValue(): Out = new Out }
    def get: Out = local.get
  }

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
        var k = 0
        while (k < a.items.length) {
          if (k > 0) { sb.append(','); if (flat && pretty) sb.append(' ') }
          if (!flat) newline(sb, pretty, depth + 1)
          write(a.items(k), sb, pretty, depth + 1)
          k += 1
        }
        if (!flat) newline(sb, pretty, depth)
        sb.append(']')
      }
    case o: Obj =>
      if (o.isEmpty) sb.append("{}")
      else {
        sb.append('{')
        var k = 0
        while (k < o.size) {
          if (k > 0) sb.append(',')
          newline(sb, pretty, depth + 1)
          quote(o.key(k), sb)
          sb.append(':')
          if (pretty) sb.append(' ')
          write(o.value(k), sb, pretty, depth + 1)
          k += 1
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
