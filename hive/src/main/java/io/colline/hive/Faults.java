package io.colline.hive;

/** Test-only fault injection (colline.test.throwIn=hook,build,listener): proves that nothing reaches Hive. */
final class Faults {
  private Faults() {
  }

  static void maybeThrow(Config cfg, String where) {
    if (cfg.throwIn.contains(where)) throw new StackOverflowError("colline.test.throwIn=" + where);
  }
}
