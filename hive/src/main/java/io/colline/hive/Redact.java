package io.colline.hive;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Everything that removes secrets or personal data before an event leaves Hive: the rules of the
 * Spark listener's Redact (listener/src/main/scala/io/colline/listener/Redact.scala), with
 * {@code colline.redaction.regex} for Spark's {@code spark.redaction.regex} and
 * {@code colline.redaction.string.regex} for {@code spark.sql.redaction.string.regex}. The shared
 * cases in hive/src/test/resources/redaction-cases.tsv are checked against both.
 */
final class Redact {
  static final String MASK = "*********(redacted)";

  /** `name=value`, `name: value`, `"name":"value"` where the name looks like a credential. */
  private static final Pattern SECRET_ASSIGNMENT = Pattern.compile(
      "(?i)([\\w.-]*(?:password|passwd|pwd|secret|token|credential|jaas|passphrase|api[._-]?key|access[._-]?key|"
          + "private[._-]?key|sas|signature|auth)[\\w.-]*[\"']?\\s*(?:=|:)\\s*)(\"[^\"]*\"|'[^']*'|[^\\s,;&)\\]}]+)");
  /** A cheap first test: every credential name above contains one of these. */
  private static final Pattern KEYWORD = Pattern.compile("(?i)pass|pwd|secret|token|credential|jaas|key|sas|signature|auth");
  /** Oracle's `user/password@host`. */
  private static final Pattern ORACLE_CREDS = Pattern.compile("(?i)(jdbc:oracle:[a-z0-9]+:)[^@/:;\\s]+/[^@\\s]*@");
  /** `scheme://user:password@` and `scheme://user@`. */
  private static final Pattern USER_INFO = Pattern.compile("(?<=://)[^/@?#;\\s]*@");
  /** Any `key=value` (for keys or values matching the redaction regex). */
  private static final Pattern ASSIGNMENT = Pattern.compile("([\\w.-]+)(\\s*=\\s*)(\"[^\"]*\"|'[^']*'|[^\\s,;&)\\]}]+)");
  private static final Pattern TYPE_PARAMS = Pattern.compile("(?i)(decimal|dec|numeric|varchar|char)\\(\\s*(\\d+\\s*,\\s*)?$");

  private final Pattern regex; // key or value regex (colline.redaction.regex)
  private final Pattern stringRegex; // free-text regex, or null
  private final boolean maskLiterals;

  Redact(Config cfg) {
    this(cfg.redactionRegex, cfg.stringRedactionRegex, cfg.maskLiterals);
  }

  Redact(String regex, String stringRegex, boolean maskLiterals) {
    this.regex = compile(regex, Pattern.compile(Config.REDACTION_DEFAULT));
    this.stringRegex = compile(stringRegex, null);
    this.maskLiterals = maskLiterals;
  }

  private static Pattern compile(String r, Pattern d) {
    if (r == null) return d;
    try {
      return Pattern.compile(r);
    } catch (PatternSyntaxException e) {
      return d;
    }
  }

  /**
   * Free text (error messages, query text): the string regex, then URL user info, credential
   * assignments and values matching the redaction regex after a `key=`.
   */
  String text(String s) {
    if (s == null) return null;
    if (stringRegex != null) {
      try {
        s = stringRegex.matcher(s).replaceAll(Matcher.quoteReplacement(MASK));
      } catch (RuntimeException ignored) {
        // keep s
      }
    }
    return secrets(s);
  }

  /** SQL text (an edge's expression, the query): literals masked (unless sql.maskLiterals=false), then text. */
  String sql(String s) {
    return text(maskLiterals ? maskLiterals(s) : s);
  }

  String secrets(String s) {
    if (s == null || s.isEmpty()) return s;
    boolean userInfo = s.indexOf('@') >= 0 && s.contains("://") || s.regionMatches(true, 0, "jdbc:oracle:", 0, 12);
    boolean keyword = (s.indexOf('=') >= 0 || s.indexOf(':') >= 0) && (KEYWORD.matcher(s).find() || regex.matcher(s).find());
    if (!userInfo && !keyword) return s;
    String t = s;
    if (userInfo) {
      t = replace(ORACLE_CREDS, t, m -> m.group(1) + "@");
      t = USER_INFO.matcher(t).replaceAll("");
    }
    if (keyword) t = replace(SECRET_ASSIGNMENT, t, m -> m.group(1) + MASK);
    if (keyword && t.indexOf('=') >= 0) {
      t = replace(ASSIGNMENT, t, m -> m.group(3).startsWith("*********(redacted")
          || (!regex.matcher(m.group(1)).find() && !regex.matcher(m.group(3)).find())
          ? m.group() : m.group(1) + m.group(2) + MASK);
    }
    return t;
  }

  /** A column or table name: a name holding a quoted literal has its literals masked. */
  String name(String s) {
    if (s == null) return null;
    if (s.indexOf('\'') >= 0 || s.indexOf('"') >= 0) return secrets(maskLiterals(s));
    return secrets(s);
  }

  /** Removes userinfo (`user:pass@`) from a URI-like string such as `s3a://k:s@bucket/x`. */
  static String uri(String s) {
    return s == null ? null : s.replaceAll("(?<=://)[^/@?#;]*@", "");
  }

  private interface Repl {
    String apply(Matcher m);
  }

  private static String replace(Pattern p, String s, Repl f) {
    Matcher m = p.matcher(s);
    StringBuffer out = new StringBuffer(s.length());
    boolean any = false;
    while (m.find()) {
      any = true;
      m.appendReplacement(out, Matcher.quoteReplacement(f.apply(m)));
    }
    if (!any) return s;
    m.appendTail(out);
    return out.toString();
  }

  /**
   * Masks literal values in SQL text: string literals (`'...'`, `"..."`) and numeric literals become
   * `?`; backquoted identifiers and the precision of types such as `DECIMAL(10,2)` are kept.
   */
  static String maskLiterals(String sql) {
    if (sql == null) return null;
    StringBuilder out = new StringBuilder(sql.length());
    int n = sql.length();
    int i = 0;
    while (i < n) {
      char c = sql.charAt(i);
      if (c == '`') {
        int end = closing(sql, i, '`');
        out.append(sql, i, end);
        i = end;
      } else if (c == '\'' || c == '"') {
        out.append('?');
        i = closing(sql, i, c);
      } else if (Character.isDigit(c) && (i == 0 || !isWordChar(sql.charAt(i - 1)))) {
        int j = i;
        while (j < n && (isWordChar(sql.charAt(j)) || sql.charAt(j) == '.'
            || ((sql.charAt(j) == '+' || sql.charAt(j) == '-') && j > i
            && (sql.charAt(j - 1) == 'E' || sql.charAt(j - 1) == 'e')))) j++;
        if (TYPE_PARAMS.matcher(out.subSequence(Math.max(0, out.length() - 40), out.length())).find()) out.append(sql, i, j);
        else out.append('?');
        i = j;
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  private static boolean isWordChar(char c) {
    return Character.isLetterOrDigit(c) || c == '_';
  }

  /** Index just past the closing quote of the quoted run starting at start. */
  private static int closing(String s, int start, char q) {
    int i = start + 1;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '\\' && q != '`') i += 2;
      else if (c == q) {
        if (i + 1 < s.length() && s.charAt(i + 1) == q) i += 2;
        else return i + 1;
      } else i++;
    }
    return s.length();
  }

  static String truncate(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max);
  }
}
