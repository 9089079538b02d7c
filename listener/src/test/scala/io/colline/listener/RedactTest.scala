package io.colline.listener

class RedactTest extends munit.FunSuite {
  override def beforeAll(): Unit = Redact.configure(None)

  test("JDBC URLs lose user info and credential parameters, keep the rest") {
    assertEquals(Redact.jdbcUrl("jdbc:postgresql://alice:s3cr3t@db:5432/shop?user=alice&password=s3cr3t&ssl=true"),
      "jdbc:postgresql://db:5432/shop?ssl=true")
    assertEquals(Redact.jdbcUrl("jdbc:sqlserver://db:1433;databaseName=shop;password=s3cr3t;encrypt=true"),
      "jdbc:sqlserver://db:1433;databaseName=shop;encrypt=true")
    assertEquals(Redact.jdbcUrl("jdbc:oracle:thin:scott/tiger@db:1521:orcl"), "jdbc:oracle:thin:@db:1521:orcl")
    assertEquals(Redact.jdbcUrl("jdbc:h2:mem:x?accessKeyId=AK&mode=PostgreSQL"), "jdbc:h2:mem:x?mode=PostgreSQL")
  }

  test("URIs lose user info") {
    assertEquals(Redact.uri("s3a://AKIA:secret@bucket/path/x.parquet"), "s3a://bucket/path/x.parquet")
    assertEquals(Redact.uri("file:/tmp/x"), "file:/tmp/x")
    // the compiled pattern does what String.replaceAll with the same regex did
    Seq("s3a://k:s@b/x", "a://u@h://v:w@h2/p", "hdfs://nn:8020/p@q", "x://@y", "://a;b@c", "jdbc:x://u:p@h;a=b@c",
      "no scheme@host", "", "s3://k@b/p?x=1#f@g").foreach { s =>
      assertEquals(Redact.uri(s), s.replaceAll("(?<=://)[^/@?#;]*@", ""), s)
    }
  }

  test("free text: credential assignments and URL user info are masked, other text is returned as is") {
    val plain = "Table or view not found: shop.orders; line 1 pos 14"
    assert(Redact.secrets(plain) eq plain)
    assertEquals(Redact.secrets("connect failed: password=hunter2, host=db"),
      "connect failed: password=" + Redact.Mask + ", host=db")
    assertEquals(Redact.secrets("""OPTIONS ("api_key": "abc123")"""), "OPTIONS (\"api_key\": " + Redact.Mask + ")")
    assertEquals(Redact.secrets("cannot reach https://bob:pw@host/x"), "cannot reach https://host/x")
  }

  test("spark.redaction.regex masks a value after key= when the key or the value matches") {
    try {
      Redact.configure(Some("(?i)pin"))
      assertEquals(Redact.secrets("card_pin=1234 other=5"), "card_pin=" + Redact.Mask + " other=5")
    } finally Redact.configure(None)
  }

  test("text: Spark's string redaction regex first, then credentials") {
    assertEquals(Redact.text("user 4111-1111 failed", Some("\\d{4}-\\d{4}".r)), "user " + Redact.Mask + " failed")
    assertEquals(Redact.text(null, None), null)
  }

  test("SQL literals are masked; identifiers in backquotes and type precision are kept") {
    assertEquals(Redact.maskLiterals("(price * 1.5E+3) > 10 AND name = 'it''s' AND `col 1` = \"x\""),
      "(price * ?) > ? AND name = ? AND `col 1` = ?")
    assertEquals(Redact.maskLiterals("CAST(a AS DECIMAL(10,2)) + x1"), "CAST(a AS DECIMAL(10,2)) + x1")
    assertEquals(Redact.maskLiterals("DATE '2024-01-01'"), "DATE ?")
  }

  test("a column name is masked only where it holds a quoted literal; the same name gives the same result") {
    assertEquals(Redact.name("total_2024"), "total_2024")
    val n = "CAST(raise_error('token=abc') AS STRING)"
    assertEquals(Redact.name(n), "CAST(raise_error(?) AS STRING)")
    assertEquals(Redact.name(n), Redact.name(n))
  }

  test("truncate") {
    assertEquals(Redact.truncate("abcdef", 3), "abc")
    assertEquals(Redact.truncate("ab", 3), "ab")
  }

  test("Scrub: free text is redacted, identifiers and names are not treated as text") {
    val e = J.obj(
      "class" -> J.Str("password=class-names-are-identifiers"),
      "sql" -> J.Str("SELECT 1 -- token=abc"),
      "url" -> J.Str("jdbc:mysql://u:p@db/x?password=p"),
      "nodes" -> J.arr(Seq(J.obj("name" -> J.Str("concat('a', b)"), "args" -> J.obj("secret" -> J.Str("k=v"))))))
    Scrub.event(e)
    assertEquals(J.render(e),
      """{"class":"password=class-names-are-identifiers","sql":"SELECT 1 -- token=""" + Redact.Mask +
        """","url":"jdbc:mysql://db/x","nodes":[{"name":"concat(?, b)","args":{"secret":"k=v"}}]}""")
  }

  test("Scrub: an object shared by several places is redacted once, as if each place had its own") {
    // redacting twice would remove the second user info too: s3://bucket
    def column() = J.obj("name" -> J.Str("s3://u@k@bucket"), "qualifier" -> J.strs(Seq("t")))
    val shared = column()
    shared.shared = true
    val e = J.obj("nodes" -> J.arr(Seq(J.obj("output" -> J.arr(Seq(shared, shared))), J.obj("output" -> J.arr(Seq(shared))))))
    val apart = J.obj("nodes" -> J.arr(Seq(J.obj("output" -> J.arr(Seq(column(), column()))), J.obj("output" -> J.arr(Seq(column()))))))
    Scrub.event(e)
    Scrub.event(apart)
    assertEquals(J.render(e), J.render(apart))
    assert(J.render(e).contains("\"s3://k@bucket\""), J.render(e))
  }

  test("the cases shared with the Hive hook (redaction-cases.tsv): the same rules in both") {
    val src = scala.io.Source.fromInputStream(getClass.getResourceAsStream("/redaction-cases.tsv"), "UTF-8")
    val cases = try src.getLines().filterNot(l => l.startsWith("#") || l.trim.isEmpty).toList finally src.close()
    assert(cases.size >= 10, cases.size)
    cases.foreach { line =>
      val f = line.split("\t", -1)
      val want = f(2).replace("MASK", Redact.Mask)
      val got = f(0) match {
        case "secrets" => Redact.secrets(f(1))
        case "maskLiterals" => Redact.maskLiterals(f(1))
        case "uri" => Redact.uri(f(1))
        case "name" => Redact.name(f(1))
      }
      assertEquals(got, want, line)
    }
  }
}
