package io.colline.hive;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;

/** The parts of colline's event envelope (docs/event-format.md) that the hook and the metastore listener share. */
final class Events {
  /** The schema version of the events this jar writes: 1.4 added Hive events and ddl alter. */
  static final String SCHEMA_VERSION = "1.4";
  /** The id of this JVM (the envelope's jvmId; no exprIds in Hive events, but the field is the same). */
  static final String JVM_ID = UUID.randomUUID().toString();
  static final int ERROR_MAX = 2000;
  static final int TEXT_MAX = 8000;

  private Events() {
  }

  /** The envelope without its body (nodes or hive). */
  static JsonObject envelope(String eventId, String producer, App app, Query q) {
    JsonObject e = new JsonObject();
    e.addProperty("schemaVersion", SCHEMA_VERSION);
    e.addProperty("eventId", eventId);
    e.addProperty("emittedAt", Instant.now().toString());
    JsonObject p = new JsonObject();
    p.addProperty("name", producer);
    p.addProperty("version", Versions.COLLINE);
    p.addProperty("hive", Versions.hive());
    e.add("producer", p);
    JsonObject a = new JsonObject();
    a.addProperty("id", app.id);
    a.addProperty("name", app.name);
    a.addProperty("user", app.user);
    a.addProperty("namespace", app.namespace);
    e.add("app", a);
    JsonObject qo = new JsonObject();
    qo.addProperty("executionId", 0);
    qo.addProperty("funcName", q.funcName);
    qo.addProperty("status", q.error == null ? "success" : "failure");
    if (q.error == null) qo.add("error", JsonNull.INSTANCE);
    else qo.addProperty("error", q.error);
    if (q.durationMs < 0) qo.add("durationMs", JsonNull.INSTANCE);
    else qo.addProperty("durationMs", q.durationMs);
    qo.addProperty("endedAt", Instant.ofEpochMilli(q.endedAtMs).toString());
    e.add("query", qo);
    e.addProperty("jvmId", JVM_ID);
    JsonObject m = new JsonObject();
    m.addProperty("nestedWrite", false);
    m.addProperty("truncated", false);
    e.add("markers", m);
    return e;
  }

  /** The application fields of the envelope: for Hive, the session (id), the job name, the user. */
  static final class App {
    final String id;
    final String name;
    final String user;
    final String namespace;

    App(String id, String name, String user, String namespace) {
      this.id = id == null ? "" : id;
      this.name = name;
      this.user = user == null ? "" : user;
      this.namespace = namespace;
    }
  }

  /** The query fields of the envelope. */
  static final class Query {
    final String funcName;
    final String error; // redacted; null: success
    final long durationMs; // -1: unknown
    final long endedAtMs;

    Query(String funcName, String error, long durationMs, long endedAtMs) {
      this.funcName = funcName;
      this.error = error;
      this.durationMs = durationMs;
      this.endedAtMs = endedAtMs;
    }
  }

  /** A table as a dataset (docs/event-format.md, Datasets): catalog, namespace [db], name. */
  static final class Table {
    final String kind; // table, view, path
    final String catalog;
    final String db;
    final String name;
    final String location; // null: unknown
    final String tableType; // MANAGED, EXTERNAL, VIEW; null for paths
    final List<Column> columns; // the data columns, then the partition keys
    final List<String> partitionColumns;

    Table(String kind, String catalog, String db, String name, String location, String tableType,
        List<Column> columns, List<String> partitionColumns) {
      this.kind = kind;
      this.catalog = catalog;
      this.db = db;
      this.name = name;
      this.location = location;
      this.tableType = tableType;
      this.columns = columns;
      this.partitionColumns = partitionColumns;
    }

    JsonObject json(Redact r) {
      JsonObject o = new JsonObject();
      o.addProperty("kind", kind);
      if ("path".equals(kind)) {
        o.addProperty("format", "hive");
        JsonArray paths = new JsonArray();
        paths.add(r.text(Redact.uri(location)));
        o.add("paths", paths);
        return o;
      }
      if (catalog != null) o.addProperty("catalog", catalog);
      JsonArray ns = new JsonArray();
      ns.add(db);
      o.add("namespace", ns);
      o.addProperty("name", name);
      o.addProperty("provider", "hive");
      if (location != null) o.addProperty("location", r.text(Redact.uri(location)));
      if (tableType != null) o.addProperty("tableType", tableType);
      if ("view".equals(kind)) o.addProperty("temporary", false); // a metastore view is never temporary
      return o;
    }
  }

  /** A column: name and Hive type. */
  static final class Column {
    final String name;
    final String type;

    Column(String name, String type) {
      this.name = name;
      this.type = type;
    }
  }

  /**
   * The catalog field of a metastore table: absent for the metastore's default catalog
   * (metastore.catalog.default, "hive"), which is the catalog Spark's session catalog reads, so that
   * the consumer keys the table as Spark does (spark_catalog/db.table); else the catalog's name.
   */
  static String catalog(String cat, String defaultCatalog) {
    if (cat == null || cat.isEmpty() || cat.equalsIgnoreCase(defaultCatalog == null ? "hive" : defaultCatalog)) return null;
    return cat;
  }

  /** MANAGED_TABLE → MANAGED, EXTERNAL_TABLE → EXTERNAL, VIRTUAL_VIEW / MATERIALIZED_VIEW → VIEW. */
  static String tableType(String hive) {
    if (hive == null) return null;
    if (hive.endsWith("_VIEW")) return "VIEW";
    return hive.endsWith("_TABLE") ? hive.substring(0, hive.length() - "_TABLE".length()) : hive;
  }

  /** `Class: first line of the message (cause: RootClass: first line)`, redacted and capped. */
  static String describe(Throwable t, String message, Redact r) {
    String s;
    if (t == null) {
      s = message == null ? "failed" : firstLine(message);
    } else {
      s = t.getClass().getName() + ": " + firstLine(String.valueOf(t.getMessage()));
      Throwable root = t;
      while (root.getCause() != null && root.getCause() != root) root = root.getCause();
      if (root != t) s += " (cause: " + root.getClass().getName() + ": " + firstLine(String.valueOf(root.getMessage())) + ")";
    }
    return Redact.truncate(r.text(s), ERROR_MAX);
  }

  private static String firstLine(String s) {
    int i = s.indexOf('\n');
    return i < 0 ? s : s.substring(0, i);
  }
}
