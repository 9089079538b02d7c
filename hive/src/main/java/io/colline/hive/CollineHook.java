package io.colline.hive;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.ql.QueryPlan;
import org.apache.hadoop.hive.ql.hooks.Entity;
import org.apache.hadoop.hive.ql.hooks.ExecuteWithHookContext;
import org.apache.hadoop.hive.ql.hooks.HookContext;
import org.apache.hadoop.hive.ql.hooks.ReadEntity;
import org.apache.hadoop.hive.ql.hooks.WriteEntity;
import org.apache.hadoop.hive.ql.metadata.Table;
import org.apache.hadoop.hive.ql.session.SessionState;

/**
 * The Hive post-execution hook ({@code hive.exec.post.hooks}, also usable as a
 * {@code hive.exec.failure.hooks}): publishes Hive's own column lineage of every query that writes
 * (INSERT, multi-insert, CTAS, CREATE VIEW, ALTER VIEW AS) with its inputs and outputs, as a
 * colline event of kind Hive (docs/event-format.md, "Hive events"), to colline's Kafka topic.
 *
 * <p>On Hive's thread it only takes a snapshot of plain values (the lineage is computed there by
 * Hive's LineageLogger code, as LineageLogger itself does) and offers it to the bounded queue of
 * the publisher thread; every Throwable is caught and counted, so a broken hook or Kafka never
 * fails or holds up a query. Needs {@code hive.lineage.hook.info.enabled=true}, and Hive's
 * LineageLogger as a post hook too for the lineage of views (docs/hive.md).
 */
public final class CollineHook implements ExecuteWithHookContext {
  /** The operations LineageLogger computes lineage for. */
  private static final Set<String> OPERATIONS = new HashSet<>(Arrays.asList(
      "QUERY", "CREATETABLE_AS_SELECT", "CREATEVIEW", "ALTERVIEW_AS", "CREATE_MATERIALIZED_VIEW"));

  /**
   * The post hooks for which Hive 4.0 computes the column lineage of a view (CREATE VIEW, ALTER
   * VIEW AS): its SemanticAnalyzer looks for these names and ignores hive.lineage.hook.info.enabled.
   */
  private static final List<String> VIEW_LINEAGE_HOOKS = Arrays.asList(
      "org.apache.hadoop.hive.ql.hooks.LineageLogger", "org.apache.hadoop.hive.ql.hooks.PostExecutePrinter",
      "org.apache.atlas.hive.hook.HiveHook");

  @Override
  public void run(HookContext ctx) {
    Publisher p = null;
    try {
      HiveConf conf = ctx.getConf();
      Config cfg = Config.from(conf);
      if (!cfg.enabled) return;
      p = Colline.publisher(cfg);
      p.metrics.seen.incrementAndGet();
      Faults.maybeThrow(cfg, "hook");
      QueryEvent e = snapshot(ctx, cfg, p);
      if (e == null) p.metrics.droppedNoLineage.incrementAndGet();
      else p.offer(e);
    } catch (Throwable t) {
      if (p != null) {
        p.metrics.internalErrors.incrementAndGet();
        p.log.warn("hook", "failed to take the lineage of a query (the query is not affected)", t);
      }
    }
  }

  /** The event of the query, or null when it writes nothing colline keeps (a plain SELECT, DDL, EXPLAIN). */
  private static QueryEvent snapshot(HookContext ctx, Config cfg, Publisher p) {
    QueryPlan plan = ctx.getQueryPlan();
    if (plan == null || plan.isExplain() || !OPERATIONS.contains(plan.getOperationName())) return null;
    String defaultCatalog = ctx.getConf().get("metastore.catalog.default", "hive");
    List<Output> outputs = outputs(plan, defaultCatalog);
    if (outputs.isEmpty()) return null; // a query that writes nothing
    QueryEvent e = new QueryEvent();
    e.eventId = UUID.randomUUID().toString();
    e.cfg = cfg;
    e.operation = plan.getOperationName();
    e.queryId = plan.getQueryId();
    e.queryText = plan.getQueryStr();
    e.outputs = outputs;
    e.inputs = inputs(plan, defaultCatalog);
    e.user = ctx.getUgi() != null ? ctx.getUgi().getShortUserName() : ctx.getUserName();
    e.sessionId = ctx.getSessionId();
    SessionState ss = SessionState.get();
    e.database = ss != null ? ss.getCurrentDatabase() : null;
    e.engine = ctx.getConf().getVar(HiveConf.ConfVars.HIVE_EXECUTION_ENGINE);
    String name = cfg.jobName != null ? cfg.jobName : trimToNull(ctx.getConf().get("hive.query.name"));
    e.explicitJobName = name;
    e.endMs = System.currentTimeMillis();
    Long start = plan.getQueryStartTime();
    e.durationMs = start == null || start == 0 ? -1 : Math.max(0, e.endMs - start);
    if (ctx.getHookType() == HookContext.HookType.ON_FAILURE_HOOK) {
      e.error = Events.describe(ctx.getException(), ctx.getErrorMessage(), p.redact);
    }
    if (("CREATEVIEW".equals(e.operation) || "ALTERVIEW_AS".equals(e.operation))
        && !viewLineage(ctx.getConf().get("hive.exec.post.hooks", ""))) {
      p.log.warn("viewLineage", "Hive computes no column lineage for CREATE VIEW or ALTER VIEW AS unless "
          + "hive.exec.post.hooks also lists org.apache.hadoop.hive.ql.hooks.LineageLogger (the event carries its tables only)", null);
    }
    if (ctx.getIndex() == null) {
      p.log.warn("noIndex", "Hive computed no column lineage for this query: set hive.lineage.hook.info.enabled=true "
          + "(the event carries its tables only)", null);
    } else {
      try {
        e.lineage = HiveLineage.of(plan, ctx.getIndex());
      } catch (Throwable t) {
        p.metrics.internalErrors.incrementAndGet();
        p.log.warn("lineage", "Hive's LineageLogger could not compute the lineage (the event carries its tables only)", t);
      }
    }
    return e;
  }

  /** The tables, partitions' tables and directories written, one entry per table or directory. */
  private static List<Output> outputs(QueryPlan plan, String defaultCatalog) {
    Map<String, Output> out = new LinkedHashMap<>();
    for (WriteEntity w : plan.getOutputs()) {
      Entity.Type t = w.getType();
      if (t == Entity.Type.TABLE || t == Entity.Type.PARTITION) {
        Table tb = w.getTable();
        if (tb == null || tb.isTemporary()) continue;
        String key = tb.getDbName() + "." + tb.getTableName();
        Output o = out.get(key);
        if (o == null) {
          o = new Output(table(tb, defaultCatalog), mode(plan.getOperationName(), w));
          out.put(key, o);
        } else if ("overwrite".equals(mode(plan.getOperationName(), w))) {
          o.mode = "overwrite";
        }
      } else if ((t == Entity.Type.DFS_DIR || t == Entity.Type.LOCAL_DIR) && !w.isTempURI()) {
        String loc = String.valueOf(w.getD());
        if (w.getD() != null && !out.containsKey(loc)) {
          out.put(loc, new Output(new Events.Table("path", null, null, null, loc, null, new ArrayList<>(), new ArrayList<>()),
              "overwrite"));
        }
      }
    }
    return new ArrayList<>(out.values());
  }

  /** overwrite (INSERT OVERWRITE), append (INSERT INTO), create (CTAS, CREATE VIEW), replace (ALTER VIEW AS). */
  private static String mode(String operation, WriteEntity w) {
    switch (operation) {
      case "CREATETABLE_AS_SELECT":
      case "CREATEVIEW":
      case "CREATE_MATERIALIZED_VIEW":
        return "create";
      case "ALTERVIEW_AS":
        return "replace";
      default:
        return w.getWriteType() == WriteEntity.WriteType.INSERT_OVERWRITE ? "overwrite" : "append";
    }
  }

  /** The tables and views read directly (a view's own base tables are Hive's indirect inputs). */
  private static List<Events.Table> inputs(QueryPlan plan, String defaultCatalog) {
    Map<String, Events.Table> in = new LinkedHashMap<>();
    for (ReadEntity r : plan.getInputs()) {
      if ((r.getType() != Entity.Type.TABLE && r.getType() != Entity.Type.PARTITION) || !r.isDirect()) continue;
      Table tb = r.getTable();
      if (tb == null || tb.isTemporary() || tb.isDummyTable()) continue;
      in.putIfAbsent(tb.getDbName() + "." + tb.getTableName(), table(tb, defaultCatalog));
    }
    return new ArrayList<>(in.values());
  }

  private static Events.Table table(Table tb, String defaultCatalog) {
    List<Events.Column> cols = new ArrayList<>();
    List<String> parts = new ArrayList<>();
    if (tb.getCols() != null) for (FieldSchema f : tb.getCols()) cols.add(new Events.Column(f.getName(), f.getType()));
    if (tb.getPartitionKeys() != null) {
      for (FieldSchema f : tb.getPartitionKeys()) {
        cols.add(new Events.Column(f.getName(), f.getType()));
        parts.add(f.getName());
      }
    }
    String type = tb.getTableType() == null ? null : Events.tableType(tb.getTableType().name());
    String loc = tb.getDataLocation() == null ? null : tb.getDataLocation().toString();
    return new Events.Table("VIEW".equals(type) ? "view" : "table", Events.catalog(tb.getCatName(), defaultCatalog),
        tb.getDbName(), tb.getTableName(), loc, type,
        cols, parts);
  }

  /** Whether Hive computes a view's column lineage with these post hooks (hive.exec.post.hooks). */
  static boolean viewLineage(String postHooks) {
    for (String h : postHooks.split(",")) {
      if (VIEW_LINEAGE_HOOKS.contains(h.trim())) return true;
    }
    return false;
  }

  private static String trimToNull(String s) {
    return s == null || s.trim().isEmpty() ? null : s.trim();
  }

  /** A written table or directory, with its write mode. */
  private static final class Output {
    final Events.Table table;
    String mode;

    Output(Events.Table table, String mode) {
      this.table = table;
      this.mode = mode;
    }
  }

  /** The snapshot of one query; the event is built from it on the publisher thread. */
  private static final class QueryEvent implements Publisher.Pending {
    Config cfg;
    String eventId, operation, queryId, queryText, user, sessionId, database, engine, explicitJobName, error;
    long endMs, durationMs;
    List<Output> outputs;
    List<Events.Table> inputs;
    HiveLineage lineage; // null: Hive computed none

    @Override
    public String key() {
      return sessionId;
    }

    @Override
    public String kind() {
      return operation;
    }

    /**
     * The job: colline.job.name, else hive.query.name, else "hive." + the db.table of the first
     * target column (Hive's vertex 0), else of the first output: so runs that write the same table
     * are one job, as the LineageLogger replay names them (docs/hive.md).
     */
    private String jobName() {
      if (explicitJobName != null) return explicitJobName;
      if (lineage != null && !lineage.vertices.isEmpty()) {
        String label = lineage.vertices.get(0).label;
        int a = label.indexOf('.');
        int b = a < 0 ? -1 : label.indexOf('.', a + 1);
        if (b > 0) return "hive." + label.substring(0, b).toLowerCase(java.util.Locale.ROOT);
      }
      Events.Table t = outputs.get(0).table;
      return t.db != null ? "hive." + (t.db + "." + t.name).toLowerCase(java.util.Locale.ROOT) : "hive";
    }

    @Override
    public JsonObject build(Redact r) {
      JsonObject e = Events.envelope(eventId, "colline-hive-hook",
          new Events.App(sessionId, r.name(jobName()), user, cfg.namespace),
          new Events.Query(operation, error, durationMs, endMs));
      e.addProperty("root", 0);
      e.add("nodes", new JsonArray());
      JsonObject h = new JsonObject();
      h.addProperty("queryId", queryId);
      h.addProperty("operation", operation);
      h.addProperty("engine", engine);
      h.addProperty("database", database);
      String text = queryText == null ? null : queryText.trim();
      h.addProperty("hash", text == null ? null : md5(text));
      h.addProperty("queryText", Redact.truncate(r.sql(text), Events.TEXT_MAX));
      JsonArray in = new JsonArray();
      for (Events.Table t : inputs) in.add(t.json(r));
      h.add("inputs", in);
      JsonArray out = new JsonArray();
      for (Output o : outputs) {
        JsonObject w = new JsonObject();
        w.add("dataset", o.table.json(r));
        w.addProperty("mode", o.mode);
        JsonArray cols = new JsonArray();
        JsonArray types = new JsonArray();
        for (Events.Column c : o.table.columns) {
          cols.add(r.name(c.name));
          types.add(c.type);
        }
        w.add("columns", cols);
        w.add("columnTypes", types);
        JsonArray parts = new JsonArray();
        for (String pc : o.table.partitionColumns) parts.add(r.name(pc));
        w.add("partitionColumns", parts);
        out.add(w);
      }
      h.add("outputs", out);
      JsonArray edges = new JsonArray();
      JsonArray vertices = new JsonArray();
      if (lineage != null) {
        for (HiveLineage.Edge x : lineage.edges) {
          JsonObject o = new JsonObject();
          o.add("sources", ints(x.sources));
          o.add("targets", ints(x.targets));
          if (x.expression != null) o.addProperty("expression", Redact.truncate(r.sql(x.expression), Events.TEXT_MAX));
          o.addProperty("edgeType", x.type);
          edges.add(o);
        }
        for (HiveLineage.Vertex v : lineage.vertices) {
          JsonObject o = new JsonObject();
          o.addProperty("id", v.id);
          o.addProperty("vertexType", v.type);
          o.addProperty("vertexId", r.name(v.label));
          vertices.add(o);
        }
      }
      h.add("edges", edges);
      h.add("vertices", vertices);
      e.add("hive", h);
      return e;
    }

    private static JsonArray ints(int[] xs) {
      JsonArray a = new JsonArray();
      for (int x : xs) a.add(x);
      return a;
    }

    /** LineageLogger's hash: the MD5 of the trimmed query text, in hex. */
    private static String md5(String s) {
      try {
        byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
        return String.format("%032x", new BigInteger(1, d));
      } catch (Exception ex) {
        return null;
      }
    }
  }
}
