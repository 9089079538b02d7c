package io.colline.listener.analyze

import java.nio.charset.StandardCharsets

import io.colline.listener.J

/** The analyzer's door, one header at a time, and what a failure answers. */
class AccessTest extends munit.FunSuite {
  private val door = Access(Some("s3cret-token"), loopbackOnly = true, port = 18990, maxBytes = 1000)
  private val ok = Map("Host" -> "127.0.0.1:18990", "Authorization" -> "Bearer s3cret-token", "Content-Type" -> "application/json")

  private def check(method: String, want: String, headers: Map[String, String]): Option[Int] =
    door.check(method, want, h => headers.collectFirst { case (k, v) if k.equalsIgnoreCase(h) => v }).map(_._1)

  test("a request with the token, a loopback Host and JSON goes through") {
    assertEquals(check("POST", "POST", ok), None)
    for (host <- Seq("localhost:18990", "[::1]:18990", "127.0.0.1", "LOCALHOST:18990"))
      assertEquals(check("POST", "POST", ok + ("Host" -> host)), None, host)
    assertEquals(check("POST", "POST", ok + ("Content-Type" -> "application/json; charset=utf-8")), None)
    assertEquals(check("GET", "GET", ok - "Content-Type"), None)
  }

  test("each missing or wrong part is refused with its status") {
    val cases = Seq(
      ("wrong method", "GET", ok, 405),
      ("no token", "POST", ok - "Authorization", 401),
      ("wrong token", "POST", ok + ("Authorization" -> "Bearer s3cret-tokeN"), 401),
      ("token without Bearer", "POST", ok + ("Authorization" -> "s3cret-token"), 401),
      ("DNS rebinding", "POST", ok + ("Host" -> "evil.example:18990"), 403),
      ("another port", "POST", ok + ("Host" -> "127.0.0.1:80"), 403),
      ("no Host", "POST", ok - "Host", 403),
      ("a 127.0.0.1 look-alike", "POST", ok + ("Host" -> "127.0.0.1.evil.example:18990"), 403),
      ("a cross-site page", "POST", ok + ("Origin" -> "http://evil.example"), 403),
      ("a null origin", "POST", ok + ("Origin" -> "null"), 403),
      ("same-site fetch", "POST", ok + ("Sec-Fetch-Site" -> "same-site"), 403),
      ("a form", "POST", ok + ("Content-Type" -> "application/x-www-form-urlencoded"), 415),
      ("text", "POST", ok + ("Content-Type" -> "text/plain"), 415),
      ("no content type", "POST", ok - "Content-Type", 415),
      ("too long", "POST", ok + ("Content-Length" -> "1001"), 413))
    for ((name, method, headers, code) <- cases)
      assertEquals(check(method, "POST", headers), Some(code), name)
    // a browser's own navigation (Sec-Fetch-Site: none) is not cross-site
    assertEquals(check("POST", "POST", ok + ("Sec-Fetch-Site" -> "none")), None)
  }

  test("beyond loopback, any Host, and the token still") {
    val open = Access(Some("t"), loopbackOnly = false, port = 18990, maxBytes = 1000)
    val h = Map("Host" -> "analyzer.example.com", "Authorization" -> "Bearer t", "Content-Type" -> "application/json")
    assertEquals(open.check("POST", "POST", k => h.get(k)), None)
    assertEquals(open.check("POST", "POST", k => (h - "Authorization").get(k)).map(_._1), Some(401))
  }

  test("a 500 says an id, never the exception") {
    val (code, body) = Server.failure(new NullPointerException("internal detail at /home/ci/secret"), "POST /v1/analyze")
    val text = J.render(body)
    assertEquals(code, 500)
    assert(text.contains("internal error") && !text.contains("NullPointer") && !text.contains("/home/ci"), text)
    assertEquals(Server.failure(new Server.Status(503, "busy"), "x")._1, 503)
    assertEquals(Server.failure(new DeadlineExceeded(3), "x")._1, 503)
    assertEquals(Server.failure(new IllegalArgumentException("conf: no"), "x")._1, 400)
  }

  test("a request's tables are read as data") {
    val req = Server.request(
      """{"tables": [{"name": "shop.orders", "columns": [{"name": "id", "type": "bigint"}, {"name": "amount",
        |"type": "int) USING parquet; CREATE DATABASE p", "nullable": false}], "partitionColumns": [], "source": "graph"}],
        |"files": [{"name": "a.sql", "sql": "SELECT 1"}]}""".stripMargin.getBytes(StandardCharsets.UTF_8))
    assertEquals(req.tables, Seq(TableSpec("shop.orders",
      Seq(ColumnSpec("id", "bigint"), ColumnSpec("amount", "int) USING parquet; CREATE DATABASE p", nullable = false)), Nil, "parquet", "graph")))
    intercept[Server.BadRequest](Server.request("""{"tables": [{"name": "t", "columns": [{"name": 1}]}]}""".getBytes(StandardCharsets.UTF_8)))
    intercept[Server.BadRequest](Server.request("""{"tables": {"name": "t"}}""".getBytes(StandardCharsets.UTF_8)))
  }
}
