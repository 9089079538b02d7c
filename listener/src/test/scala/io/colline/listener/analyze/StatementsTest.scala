package io.colline.listener.analyze

class StatementsTest extends munit.FunSuite {
  private def split(s: String) = Statements.split(s).map(st => (st.text, st.line, st.column))

  test("statements end at ; and start at their first character, comments before them dropped") {
    val sql = "-- a job\nSELECT 1;\n\n  /* two */ INSERT INTO t\n  SELECT 2 ;SELECT 3"
    assertEquals(split(sql), Seq(("SELECT 1", 2, 1), ("INSERT INTO t\n  SELECT 2", 4, 13), ("SELECT 3", 5, 13)))
  }

  test("; inside strings, backquoted names and comments does not end a statement") {
    val sql = "SELECT 'a;b', \"c;d\", `e;f` -- g;h\n, 'it\\'s;' /* i; /* nested; */ j; */ FROM t;"
    assertEquals(split(sql).map(_._1), Seq("SELECT 'a;b', \"c;d\", `e;f` -- g;h\n, 'it\\'s;' /* i; /* nested; */ j; */ FROM t"))
    assertEquals(split("SELECT `a``;b` FROM t; SELECT 2").map(_._1), Seq("SELECT `a``;b` FROM t", "SELECT 2"))
  }

  test("empty statements and files of comments only give nothing") {
    assertEquals(split(";;\n -- only a comment\n/* and another */;"), Nil)
    assertEquals(split(""), Nil)
  }

  test("a position Spark reports in a statement is a position in the file") {
    val st = Statement(1, "INSERT INTO t\n  SELECT x", line = 4, column = 13)
    assertEquals(st.at(Some(1), Some(12)), (4, 25)) // line 1: after the statement's own column
    assertEquals(st.at(Some(2), Some(9)), (5, 10))
    assertEquals(st.at(None, None), (4, 13))
  }
}
