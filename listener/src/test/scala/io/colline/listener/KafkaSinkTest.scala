package io.colline.listener

class KafkaSinkTest extends munit.FunSuite {
  test("the default compression falls back past codecs that do not work, keeping why") {
    val missing = new NoClassDefFoundError("com/github/luben/zstd/BufferPool")
    val (codec, failed) = KafkaSink.choose(KafkaSink.Codecs, c => if (c == "zstd") Some(missing) else None)
    assertEquals(codec, "lz4")
    assertEquals(failed, Seq("zstd" -> missing))
    assertEquals(KafkaSink.choose(KafkaSink.Codecs, _ => None), ("zstd", Seq.empty))
    assertEquals(KafkaSink.choose(Seq("zstd"), _ => Some(missing))._1, "none")
  }

  test("every codec of the default compresses on this line's classpath (the classpath Spark ships)") {
    KafkaSink.Codecs.foreach(c => assertEquals(KafkaSink.problem(c).map(_.toString), None, c))
    assertEquals(KafkaSink.compression, "zstd")
    assert(KafkaSink.problem("brotli").isDefined)
  }

  test("a WARN line carries the cause chain down to the root cause") {
    val missing = new NoClassDefFoundError("com/github/luben/zstd/BufferPool")
    missing.initCause(new ClassNotFoundException("com.github.luben.zstd.BufferPool"))
    assertEquals(Causes.append("colline: failed", new RuntimeException("Failed to construct kafka producer", missing)),
      "colline: failed: java.lang.RuntimeException: Failed to construct kafka producer; caused by: " +
        "java.lang.NoClassDefFoundError: com/github/luben/zstd/BufferPool; caused by: " +
        "java.lang.ClassNotFoundException: com.github.luben.zstd.BufferPool")
    assertEquals(Causes.append("colline: failed", null), "colline: failed")
    val (a, b) = (new RuntimeException("a"), new RuntimeException("b"))
    a.initCause(b); b.initCause(a)
    assertEquals(Causes.append("loop", a), "loop: java.lang.RuntimeException: a; caused by: java.lang.RuntimeException: b")
  }

  test("a WARN line's cause chain has its credentials redacted") {
    val root = new IllegalStateException("bad option token=abc123")
    val top = new RuntimeException("cannot reach jdbc:postgresql://admin:hunter2@db:5432/sales?password=hunter2", root)
    val line = Causes.append("colline: failed", top)
    assert(!line.contains("hunter2") && !line.contains("abc123"), line)
    assert(line.startsWith("colline: failed: java.lang.RuntimeException: cannot reach jdbc:postgresql://db:5432/sales?password=" + Redact.Mask), line)
    assert(line.endsWith("caused by: java.lang.IllegalStateException: bad option token=" + Redact.Mask), line)
  }
}
