package io.colline.hive;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class CollineHookTest {
  @Test
  public void viewLineageNeedsLineageLoggerAsAPostHook() {
    assertFalse(CollineHook.viewLineage(""));
    assertFalse(CollineHook.viewLineage("io.colline.hive.CollineHook"));
    assertTrue(CollineHook.viewLineage("io.colline.hive.CollineHook, org.apache.hadoop.hive.ql.hooks.LineageLogger"));
    assertTrue(CollineHook.viewLineage("org.apache.atlas.hive.hook.HiveHook"));
  }
}
