package io.colline.listener

import scala.util.matching.Regex

/** Everything that removes secrets or personal data before an event leaves the driver. */
private[listener] object Redact {

  /** Keys whose values are never sent (URL query / property parameters). */
  private val SecretKey: Regex =
    "(?i)^(user|username|userid|uid|password|passwd|pwd|pass|token|secret|key|credentials?|auth|authorization|sas|sig|signature|access[._-]?key.*|secret[._-]?key.*|.*password.*|.*passwd.*|.*pwd.*|.*passphrase.*|.*secret.*|.*token.*|.*credential.*|.*private.?key.*|apikey|api[._-]?key)$".r

  /** Removes userinfo (`user:pass@`) from an URI-like string such as `s3a://k:s@bucket/x`. */
  def uri(s: String): String =
    if (s == null) null else s.replaceAll("(?<=://)[^/@?#;]*@", "")

  /**
   * A JDBC URL without credentials: userinfo (`//u:p@host`), Oracle's `u/p@host`, and
   * credential-like parameters in `?a=b&c=d` or `;a=b;c=d` form are removed.
   */
  def jdbcUrl(url: String): String = {
    if (url == null) return null
    var u = url.trim
    // jdbc:oracle:thin:scott/tiger@host:1521:sid  ->  jdbc:oracle:thin:@host:1521:sid
    u = u.replaceAll("(?i)^(jdbc:oracle:[a-z0-9]+:)[^@/:;]+/[^@]*@", "$1@")
    // //user:pass@host  ->  //host
    u = uri(u)
    // split off parameters, keep the ones that are not secrets
    val q = u.indexOf('?')
    val (head, params, sep) =
      if (q >= 0) (u.substring(0, q), u.substring(q + 1), "&")
      else {
        val semi = u.indexOf(';')
        if (semi >= 0) (u.substring(0, semi), u.substring(semi + 1), ";") else (u, "", "")
      }
    if (params.isEmpty) return head
    val kept = params.split("[&;]").filter(_.nonEmpty).filterNot { p =>
      val k = p.takeWhile(_ != '=').trim
      SecretKey.pattern.matcher(k).matches()
    }
    if (kept.isEmpty) head
    else if (sep == "&") head + "?" + kept.mkString("&")
    else head + ";" + kept.mkString(";")
  }

  /** Applies Spark's string redaction regex (`spark.sql.redaction.string.regex`), if any. */
  def text(s: String, regex: Option[Regex]): String =
    if (s == null) null
    else regex.fold(s)(r => r.replaceAllIn(s, "*********(redacted)"))

  private val TypeParams: Regex = "(?i)(decimal|dec|numeric|varchar|char)\\(\\s*(\\d+\\s*,\\s*)?$".r

  /**
   * Masks the literal values in Spark's SQL text of an expression: string literals (`'...'`,
   * `"..."`, with their prefixes such as `DATE '...'` or `X'...'` kept as prefixes) and numeric
   * literals become `?`. Backquoted identifiers and the precision of types such as
   * `DECIMAL(10,2)` are kept.
   */
  def maskLiterals(sql: String): String = {
    if (sql == null) return null
    val out = new java.lang.StringBuilder(sql.length)
    val n = sql.length
    var i = 0
    while (i < n) {
      val c = sql.charAt(i)
      if (c == '`') {
        val end = closing(sql, i, '`')
        out.append(sql, i, end)
        i = end
      } else if (c == '\'' || c == '"') {
        out.append('?')
        i = closing(sql, i, c)
      } else if (Character.isDigit(c) && (i == 0 || !isWordChar(sql.charAt(i - 1)))) {
        var j = i
        while (j < n && (isWordChar(sql.charAt(j)) || sql.charAt(j) == '.' ||
          ((sql.charAt(j) == '+' || sql.charAt(j) == '-') && j > i &&
            (sql.charAt(j - 1) == 'E' || sql.charAt(j - 1) == 'e')))) j += 1
        if (TypeParams.findFirstIn(out.subSequence(math.max(0, out.length - 40), out.length)).isDefined) out.append(sql, i, j) else out.append('?')
        i = j
      } else {
        out.append(c)
        i += 1
      }
    }
    out.toString
  }

  private def isWordChar(c: Char): Boolean = Character.isLetterOrDigit(c) || c == '_'

  /** Index just past the closing quote of the quoted run starting at `start`. */
  private def closing(s: String, start: Int, q: Char): Int = {
    var i = start + 1
    while (i < s.length) {
      val c = s.charAt(i)
      if (c == '\\' && q != '`') i += 2
      else if (c == q) {
        if (i + 1 < s.length && s.charAt(i + 1) == q) i += 2 // doubled quote
        else return i + 1
      } else i += 1
    }
    s.length
  }

  def truncate(s: String, max: Int): String =
    if (s == null || s.length <= max) s else s.substring(0, max)
}
