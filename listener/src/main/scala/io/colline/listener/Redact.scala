package io.colline.listener

import scala.util.Try
import scala.util.matching.Regex

/** Everything that removes secrets or personal data before an event leaves the driver. */
private[listener] object Redact {

  /** Keys whose values are never sent (URL query / property parameters). */
  private val SecretKey: Regex =
    ("(?i)^(user|username|userid|uid|password|passwd|pwd|pass|token|secret|key|credentials?|auth|authorization|" +
      "sas|sig|signature|access[._-]?key.*|secret[._-]?key.*|.*password.*|.*passwd.*|.*pwd.*|.*passphrase.*|" +
      ".*secret.*|.*token.*|.*credential.*|.*private.?key.*|.*jaas.*|.*sas.*token.*|.*key|apikey|api[._-]?key)$").r

  /** Spark's `spark.redaction.regex` (key or value match), set once by the publisher. */
  @volatile private var sparkRegex: Option[Regex] = Some(Config.SparkRedactionDefault.r)

  def configure(regex: Option[String]): Unit =
    sparkRegex = regex.flatMap(r => Try(r.r).toOption).orElse(Some(Config.SparkRedactionDefault.r))

  /** A parameter key (or its value, as in Spark's `Utils.redact`) that must not be sent. */
  def secretParam(key: String, value: String): Boolean =
    SecretKey.pattern.matcher(key.trim).matches() ||
      sparkRegex.exists(r => r.findFirstIn(key).isDefined || (value != null && r.findFirstIn(value).isDefined))

  val Mask = "*********(redacted)"

  /** `name=value`, `name: value`, `"name":"value"` where the name looks like a credential. */
  private val SecretAssignment: Regex =
    ("(?i)([\\w.-]*(?:password|passwd|pwd|secret|token|credential|jaas|passphrase|api[._-]?key|access[._-]?key|" +
      "private[._-]?key|sas|signature|auth)[\\w.-]*[\"']?\\s*(?:=|:)\\s*)(\"[^\"]*\"|'[^']*'|[^\\s,;&)\\]}]+)").r

  /** A cheap first test: every credential name above contains one of these. */
  private val Keyword: Regex = "(?i)pass|pwd|secret|token|credential|jaas|key|sas|signature|auth".r

  /** Oracle's `user/password@host`. */
  private val OracleCreds: Regex = "(?i)(jdbc:oracle:[a-z0-9]+:)[^@/:;\\s]+/[^@\\s]*@".r
  /** `scheme://user:password@` and `scheme://user@`. */
  private val UserInfo: Regex = "(?<=://)[^/@?#;\\s]*@".r

  /**
   * Free text (error messages, SQL text, query options): Spark's string regex, then URL user info,
   * credential assignments and values matching `spark.redaction.regex` after a `key=`.
   */
  def secrets(s: String): String = {
    if (s == null || s.isEmpty) return s
    val userInfo = s.indexOf('@') >= 0 && s.indexOf("://") >= 0 || s.regionMatches(true, 0, "jdbc:oracle:", 0, 12)
    val keyword = (s.indexOf('=') >= 0 || s.indexOf(':') >= 0) &&
      (Keyword.pattern.matcher(s).find() || sparkRegex.exists(_.pattern.matcher(s).find()))
    if (!userInfo && !keyword) return s // the common case: nothing that can hold a credential
    var t = s
    if (userInfo) {
      t = OracleCreds.replaceAllIn(t, m => Regex.quoteReplacement(m.group(1) + "@"))
      t = UserInfo.replaceAllIn(t, "")
    }
    if (keyword) t = SecretAssignment.replaceAllIn(t, m => Regex.quoteReplacement(m.group(1) + Mask))
    if (keyword && t.indexOf('=') >= 0) sparkRegex.foreach { r =>
      t = Assignment.replaceAllIn(t, m =>
        if (m.group(3).startsWith("*********(redacted") || (r.findFirstIn(m.group(1)).isEmpty && r.findFirstIn(m.group(3)).isEmpty))
          Regex.quoteReplacement(m.matched)
        else Regex.quoteReplacement(m.group(1) + m.group(2) + Mask))
    }
    t
  }

  /**
   * A column or alias name: Spark names an unaliased expression after its SQL text, literals
   * included (`CAST(raise_error('...') AS STRING)`), so a name with a quote has its literals masked.
   * The same name always gives the same result (output attributes and write columns stay aligned).
   */
  def name(s: String): String =
    if (s == null) null
    else if (s.indexOf('\'') >= 0 || s.indexOf('"') >= 0) secrets(maskLiterals(s))
    else secrets(s)

  /** Any `key=value` (for keys or values matching `spark.redaction.regex`). */
  private val Assignment: Regex = "([\\w.-]+)(\\s*=\\s*)(\"[^\"]*\"|'[^']*'|[^\\s,;&)\\]}]+)".r

  private val UriUserInfo = java.util.regex.Pattern.compile("(?<=://)[^/@?#;]*@")

  /** Removes userinfo (`user:pass@`) from an URI-like string such as `s3a://k:s@bucket/x`. */
  def uri(s: String): String =
    if (s == null) null else UriUserInfo.matcher(s).replaceAll("") // = s.replaceAll(regex, ""), compiled once

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
      secretParam(k, p.dropWhile(_ != '=').drop(1))
    }
    if (kept.isEmpty) head
    else if (sep == "&") head + "?" + kept.mkString("&")
    else head + ";" + kept.mkString(";")
  }

  /**
   * Applies Spark's string redaction regex (`spark.sql.redaction.string.regex`), if any, then
   * removes credentials (see `secrets`).
   */
  def text(s: String, regex: Option[Regex]): String =
    if (s == null) null
    else secrets(regex.fold(s)(r => Try(r.replaceAllIn(s, Mask)).getOrElse(s)))

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
