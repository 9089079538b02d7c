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

  test("compact bytes are written straight to bytes, as render then UTF-8 encodes them") {
    val alphabet = "ab \"\\\n\u0000\u001f\u007f\u00e9\u07ff\u0800\u2027\u2028\u2029\u202a\ud800\udbff\udc00\udfff\uffff\ud83d\ude00"
    val rnd = new scala.util.Random(33)
    def str(): String = Seq.fill(rnd.nextInt(16))(alphabet.charAt(rnd.nextInt(alphabet.length))).mkString
    def tree(depth: Int): J = rnd.nextInt(if (depth > 3) 5 else 8) match {
      case 0 => J.Str(str())
      case 1 => J.Num(rnd.nextLong())
      case 2 => J.Bool(rnd.nextBoolean())
      case 3 => J.Null
      case 4 => val r = new J.Ref; if (rnd.nextBoolean()) r.id = rnd.nextInt(1000); r
      case 5 | 6 => val o = new J.Obj; (0 until rnd.nextInt(5)).foreach(_ => o.put(str(), tree(depth + 1))); o
      case _ => J.arr(Seq.fill(rnd.nextInt(5))(tree(depth + 1)))
    }
    for (_ <- 1 to 3000) {
      val j = tree(0)
      assert(java.util.Arrays.equals(J.toBytes(j), J.render(j).getBytes(StandardCharsets.UTF_8)), J.render(j))
    }
    val big = J.Str("x" * (5 << 20)) // past the kept buffer: grows, then shrinks back
    assertEquals(J.toBytes(big).length, (5 << 20) + 2)
    assertEquals(new String(J.toBytes(J.Str("é")), StandardCharsets.UTF_8), "\"é\"")
  }

  test("add appends without looking for the key; put after it still finds it") {
    val o = new J.Obj
    (0 until 12).foreach(k => o.add(s"k$k", J.Num(k)))
    o.put("k11", J.Null)
    assertEquals(o.size, 12)
    assertEquals(J.render(o), (0 until 12).map(k => if (k == 11) s""""k$k":null""" else s""""k$k":$k""").mkString("{", ",", "}"))
  }

  test("toBytes writes a shared object where it is, each time: the bytes of render") {
    val shared = J.obj("exprId" -> J.Num(7), "name" -> J.Str("é\"x"), "qualifier" -> J.strs(Seq("a", "b")))
    shared.shared = true
    val other = J.obj("name" -> J.Str("y"))
    other.shared = true
    val j = J.obj("nodes" -> J.arr(Seq(J.obj("output" -> J.arr(Seq(shared, other, shared))), J.obj("output" -> J.arr(Seq(other, shared))))))
    val want = J.render(j).getBytes(StandardCharsets.UTF_8)
    assert(java.util.Arrays.equals(J.toBytes(j), want), new String(J.toBytes(j), StandardCharsets.UTF_8))
    assert(java.util.Arrays.equals(J.toBytes(j), want), "a second time, on the thread's buffer")
  }

  test("toBytes is UTF-8") {
    assertEquals(new String(J.toBytes(J.Str("é→")), StandardCharsets.UTF_8), "\"é→\"")
    assertEquals(J.toBytes(J.Str("é")).length, 4)
  }
}
