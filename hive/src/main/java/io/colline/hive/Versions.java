package io.colline.hive;

import java.io.InputStream;
import java.util.Properties;

/** The jar's version and the Hive it runs in. */
final class Versions {
  static final String COLLINE = read();

  private Versions() {
  }

  private static String read() {
    try (InputStream in = Versions.class.getResourceAsStream("/colline-hive.properties")) {
      Properties p = new Properties();
      if (in != null) p.load(in);
      return p.getProperty("version", "dev");
    } catch (Exception e) {
      return "dev";
    }
  }

  /** Hive's version, or "" when Hive's version class is not there (a bare metastore has it too). */
  static String hive() {
    try {
      Class<?> c = Class.forName("org.apache.hive.common.util.HiveVersionInfo");
      return String.valueOf(c.getMethod("getVersion").invoke(null));
    } catch (Throwable t) {
      return "";
    }
  }
}
