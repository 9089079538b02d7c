package io.colline.listener.analyze

import scala.collection.mutable.ArrayBuffer

/** One statement of a SQL file: its text (without the `;`) and where it starts (1-based). */
private[listener] final case class Statement(index: Int, text: String, line: Int, column: Int) {
  /** A position Spark reports inside the statement (line 1-based, position 0-based) in the file. */
  def at(l: Option[Int], pos: Option[Int]): (Int, Int) = (l, pos) match {
    case (Some(1), p) => (line, column + p.getOrElse(0))
    case (Some(n), p) => (line + n - 1, p.getOrElse(0) + 1)
    case (None, _) => (line, column)
  }
}

/**
 * Splits SQL text into statements at `;` outside string literals (`'…'`, `"…"`, with backslash
 * escapes as Spark reads them), backquoted identifiers, `--` comments and (nested) bracketed
 * comments. Comments between statements are dropped; a statement that is only comments is none.
 */
private[listener] object Statements {
  def split(text: String): Seq[Statement] = {
    val out = ArrayBuffer.empty[Statement]
    val n = text.length
    var i = 0
    var line = 1
    var col = 1
    var start = -1 // offset of the current statement's first significant character
    var startLine, startCol = 0

    def advance(): Unit = {
      if (text.charAt(i) == '\n') { line += 1; col = 1 } else col += 1
      i += 1
    }
    def begin(): Unit = if (start < 0) { start = i; startLine = line; startCol = col }
    def end(stop: Int): Unit = {
      if (start >= 0) {
        val s = text.substring(start, stop).replaceAll("\\s+$", "")
        if (s.nonEmpty) out += Statement(out.size + 1, s, startLine, startCol)
      }
      start = -1
    }

    while (i < n) {
      val c = text.charAt(i)
      if (c == '-' && i + 1 < n && text.charAt(i + 1) == '-') {
        while (i < n && text.charAt(i) != '\n') advance()
      } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
        var depth = 0
        var closed = false
        while (i < n && !closed) {
          if (text.startsWith("/*", i)) { depth += 1; advance(); advance() }
          else if (text.startsWith("*/", i)) { depth -= 1; advance(); advance(); closed = depth == 0 }
          else advance()
        }
      } else if (c == '\'' || c == '"' || c == '`') {
        begin()
        advance()
        var closed = false
        while (i < n && !closed) {
          val d = text.charAt(i)
          if (d == '\\' && c != '`' && i + 1 < n) { advance(); advance() }
          else if (d == c) {
            advance()
            if (c == '`' && i < n && text.charAt(i) == '`') advance() // `` inside a backquoted name
            else closed = true
          } else advance()
        }
      } else if (c == ';') {
        end(i)
        advance()
      } else {
        if (!Character.isWhitespace(c)) begin()
        advance()
      }
    }
    end(n)
    out.toSeq
  }
}
