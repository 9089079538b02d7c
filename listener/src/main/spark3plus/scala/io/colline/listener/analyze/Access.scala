package io.colline.listener.analyze

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import scala.util.Try

/**
 * Who may call the analyzer, checked on a request's line and headers before its body is read:
 * the method; the Host header when the analyzer listens on a loopback address only (a web page
 * whose name resolves to 127.0.0.1, DNS rebinding, names another host); no cross-site browser
 * request (an `Origin` header, or `Sec-Fetch-Site` other than `none`: the analyzer serves no
 * pages, so any page calling it is another site's); the bearer token; `Content-Type:
 * application/json` on a body; a declared length within the limit.
 */
private[listener] final case class Access(token: Option[String], loopbackOnly: Boolean, port: Int, maxBytes: Long) {
  /** None to go on, else the status and message to answer. `header` reads a request header (any case). */
  def check(method: String, want: String, header: String => Option[String]): Option[(Int, String)] = {
    def host = {
      val h = header("Host").getOrElse("")
      if (!loopbackOnly || Access.loopbackHost(h, port)) None
      else Some(403 -> s"Host ${Tables.quoted(Analyzer.head(h))} is not this analyzer's (it listens on loopback: 127.0.0.1, localhost or [::1], port $port)")
    }
    def origin = header("Origin").map(o =>
      403 -> s"a cross-site request (Origin ${Tables.quoted(Analyzer.head(o))}): the analyzer serves no pages and answers no browser page")
    def fetchSite = header("Sec-Fetch-Site").filterNot(_.equalsIgnoreCase("none")).map(s =>
      403 -> s"a cross-site request (Sec-Fetch-Site ${Tables.quoted(Analyzer.head(s))}): the analyzer answers no browser page")
    def bearer = token.flatMap { t =>
      val got = header("Authorization").getOrElse("")
      if (MessageDigest.isEqual(got.getBytes(StandardCharsets.UTF_8), ("Bearer " + t).getBytes(StandardCharsets.UTF_8))) None
      else Some(401 -> "missing or wrong bearer token (Authorization: Bearer <the token of --token-file>)")
    }
    def contentType = if (method != "POST") None else {
      val ct = header("Content-Type").getOrElse("")
      if (ct.split(";")(0).trim.equalsIgnoreCase("application/json")) None
      else Some(415 -> s"Content-Type ${Tables.quoted(Analyzer.head(ct))}: want application/json")
    }
    def length = if (method != "POST") None else
      header("Content-Length").flatMap(l => Try(l.trim.toLong).toOption).filter(_ > maxBytes)
        .map(n => 413 -> s"the body is $n bytes, larger than $maxBytes (--max-bytes)")
    (if (method != want) Some(405 -> s"use $want") else None)
      .orElse(host).orElse(origin).orElse(fetchSite).orElse(bearer).orElse(contentType).orElse(length)
  }
}

private[listener] object Access {
  private val LoopbackNames = Set("127.0.0.1", "localhost", "[::1]")

  /** `127.0.0.1:port`, `localhost:port`, `[::1]:port` (or without the port). */
  def loopbackHost(host: String, port: Int): Boolean = {
    val h = host.trim.toLowerCase
    val (name, p) = h.lastIndexOf(':') match {
      case i if i > 0 && !h.endsWith("]") => (h.substring(0, i), Some(h.substring(i + 1)))
      case _ => (h, None)
    }
    LoopbackNames(name) && p.forall(_ == port.toString)
  }

  def isLoopback(address: String): Boolean =
    Try(java.net.InetAddress.getByName(address).isLoopbackAddress).getOrElse(false)
}
