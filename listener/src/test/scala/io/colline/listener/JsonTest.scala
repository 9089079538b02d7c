package io.colline.listener

import java.nio.charset.StandardCharsets

class JsonTest extends munit.FunSuite {
  test("compact rendering keeps insertion order; put replaces a key in place") {
    val o = J.obj("b" -> J.Num(1), "a" -> J.Bool(true), "n" -> J.Null)
    o.put("c", J.strs(Seq("x", null)))
    o.put("b", "two")
    o.put("e", new J.Arr).put("f", new J.Obj)
    assertEquals(J.render(o), """{"b":"two","a":true,"n":null,"c":["x",null],"e":[],"f":{}}""")
  }

  test("strings are escaped: quotes, backslash, controls, line separators, lone surrogates") {
    val s = "q\" b\\ \n\r\t\b\f \u0001 \u2028\u2029 ok\ud83d\ude00 lone\ud800 x\udc00"
    assertEquals(J.render(J.Str(s)),
      "\"q\\\" b\\\\ \\n\\r\\t\\b\\f \\u0001 \\u2028\\u2029 ok\ud83d\ude00 lone\\ud800 x\\udc00\"")
  }

  test("quoting in runs escapes as character by character does, on random strings") {
    // the reference: one character at a time, as the writer did before it appended runs
    def reference(s: String): String = {
      val sb = new StringBuilder("\"")
      var i = 0
      while (i < s.length) {
        val c = s.charAt(i)
        val valid = !Character.isSurrogate(c) ||
          (if (Character.isHighSurrogate(c)) i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))
          else i > 0 && Character.isHighSurrogate(s.charAt(i - 1)))
        c match {
          case '"' => sb.append("\\\"")
          case '\\' => sb.append("\\\\")
          case '\n' => sb.append("\\n")
          case '\r' => sb.append("\\r")
          case '\t' => sb.append("\\t")
          case '\b' => sb.append("\\b")
          case '\f' => sb.append("\\f")
          case _ if c < 0x20 || c == '\u2028' || c == '\u2029' || !valid => sb.append("\\u%04x".format(c.toInt))
          case _ => sb.append(c)
        }
        i += 1
      }
      sb.append('"').toString
    }
    val alphabet = "ab \"\\\n\u0000\u001f\u007f\u00e9\u2027\u2028\u2029\u202a\ud800\udbff\udc00\udfff\uffff"
    val rnd = new scala.util.Random(17)
    for (_ <- 1 to 5000) {
      val s = Seq.fill(rnd.nextInt(12))(alphabet.charAt(rnd.nextInt(alphabet.length))).mkString
      assertEquals(J.render(J.Str(s)), reference(s), s.map(c => "%04x".format(c.toInt)).mkString(" "))
    }
  }

  test("a Ref renders its resolved index, null before it is resolved") {
    val r = new J.Ref
    val o = J.obj("query" -> r)
    assertEquals(J.render(o), """{"query":null}""")
    r.id = 3
    assertEquals(J.render(o), """{"query":3}""")
  }

  test("pretty rendering: two-space indent, scalar arrays on one line, a final newline") {
    val o = J.obj("a" -> J.strs(Seq("x", "y")), "b" -> J.arr(Seq(J.obj("k" -> J.Num(-1)))), "c" -> J.opt(None))
    assertEquals(J.render(o, pretty = true),
      """{
        |  "a": ["x", "y"],
        |  "b": [
        |    {
        |      "k": -1
        |    }
        |  ],
        |  "c": null
        |}
        |""".stripMargin)
  }

  test("toBytes is UTF-8") {
    assertEquals(new String(J.toBytes(J.Str("é→")), StandardCharsets.UTF_8), "\"é→\"")
    assertEquals(J.toBytes(J.Str("é")).length, 4)
  }
}
