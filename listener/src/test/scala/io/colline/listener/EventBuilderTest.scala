package io.colline.listener

import org.apache.spark.sql.catalyst.expressions.{Add, Alias, Attribute, AttributeReference, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, Project}
import org.apache.spark.sql.types.{DataType, DecimalType, IntegerType, StringType}

/** The per-event caches of EventBuilder (DataType strings) and the per-class short names. */
class EventBuilderTest extends munit.FunSuite {
  private def event(plan: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): J.Obj = {
    val p = Pending("command", plan, 1L, success = true, None, None, 0L, "app", "n", "u", None)
    EventBuilder.build(p, None, Config.from(Map.empty[String, String])) match {
      case Event(json, _, _) => json
      case other => fail(s"not built: $other")
    }
  }

  private def nodes(e: J.Obj): Seq[J.Obj] = e.get("nodes") match {
    case Some(a: J.Arr) => a.items.collect { case o: J.Obj => o }.toSeq
    case other => fail(s"no nodes: $other")
  }

  private def str(o: J.Obj, k: String): String = o.get(k) match {
    case Some(J.Str(s)) => s
    case other => fail(s"$k: $other")
  }

  private def outputTypes(n: J.Obj): Seq[(String, String)] = n.get("output") match {
    case Some(a: J.Arr) => a.items.collect { case o: J.Obj => str(o, "name") -> str(o, "type") }.toSeq
    case other => fail(s"no output: $other")
  }

  test("types: distinct DataType instances with equal or different text, the same instance in several nodes") {
    val d72a: DataType = DecimalType(7, 2)
    val d72b: DataType = DecimalType(7, 2) // equal, another instance
    val d104: DataType = DecimalType(10, 4)
    val a = AttributeReference("a", d72a)()
    val b = AttributeReference("b", d72b)()
    val c = AttributeReference("c", d104)()
    val s = AttributeReference("s", StringType)()
    val i = AttributeReference("i", IntegerType)()
    val rel = LocalRelation(Seq[Attribute](a, b, c, s, i))
    val filter = Filter(Literal(true), rel)
    val sum = Alias(Add(a, b), "ab")()
    val plan = Project(Seq(a, c, sum, i), filter)
    val ns = nodes(event(plan))
    assertEquals(ns.map(n => str(n, "class").split('.').last), Seq("Project", "Filter", "LocalRelation"))
    def expected(as: Seq[Attribute]) = as.map(x => x.name -> x.dataType.catalogString)
    assertEquals(outputTypes(ns(2)), expected(rel.output))
    assertEquals(outputTypes(ns(1)), expected(filter.output))
    assertEquals(outputTypes(ns(0)), expected(plan.output))
    assertEquals(outputTypes(ns(2)).map(_._2), Seq("decimal(7,2)", "decimal(7,2)", "decimal(10,4)", "string", "int"))
    // the expression tree: the Alias, its Add and the Add's children carry their own types
    val projectList = ns(0).get("exprs") match {
      case Some(o: J.Obj) => o.get("projectList") match { case Some(arr: J.Arr) => arr.items; case x => fail(s"$x") }
      case x => fail(s"$x")
    }
    val alias = projectList(2).asInstanceOf[J.Obj]
    assertEquals(str(alias, "type"), sum.dataType.catalogString)
    val add = alias.get("children").get.asInstanceOf[J.Arr].items.head.asInstanceOf[J.Obj]
    assertEquals(str(add, "type"), sum.child.dataType.catalogString)
    assertEquals(add.get("children").get.asInstanceOf[J.Arr].items.map(x => str(x.asInstanceOf[J.Obj], "type")).toSeq,
      Seq("decimal(7,2)", "decimal(7,2)"))
    // the same plan again: nothing carried over from the previous event
    assertEquals(J.render(event(plan).get("nodes").get), J.render(event(plan).get("nodes").get))
  }

  test("shortName: per class, as computed from the class name") {
    def reference(o: AnyRef): String = {
      val n = o.getClass.getName
      n.substring(n.lastIndexOf('.') + 1).stripSuffix("$").split('$').last
    }
    val objs: Seq[AnyRef] = Seq(org.apache.spark.sql.SaveMode.Append, IntegerType, StringType, DecimalType(3, 1),
      Literal(1), None, Some(1), new Object, new Runnable { def run(): Unit = () }, J.Null, J.Str("x"))
    objs.foreach(o => assertEquals(Nodes.shortName(o), reference(o), o.getClass.getName))
    objs.foreach(o => assertEquals(Nodes.shortName(o), reference(o), o.getClass.getName)) // cached
  }

  test("put replaces the key it finds, wherever it is, and appends others") {
    val o = new J.Obj
    (0 until 20).foreach(k => o.put(s"k$k", k.toLong))
    o.put("k19", "last").put("k0", "first").put("k7", J.Null).put("new", true)
    assertEquals(o.fields.map(_._1).toSeq, (0 until 20).map(k => s"k$k") :+ "new")
    assertEquals(o.get("k19"), Some(J.Str("last")))
    assertEquals(o.get("k0"), Some(J.Str("first")))
    assertEquals(o.get("k7"), Some(J.Null))
    assertEquals(o.get("k8"), Some(J.Num(8)))
    assertEquals(J.render(J.strs(Seq("a", null, "b"))), """["a",null,"b"]""")
    assertEquals(J.render(J.arr(Nil)), "[]")
  }
}
