package io.colline.hive;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The metastore listener ({@code hive.metastore.event.listeners}, in the metastore's
 * hive-site.xml or metastore-site.xml): publishes the identity changes of tables and views as the
 * Spark listener publishes its DDL (docs/event-format.md, "DDL"), whichever engine asked the
 * metastore for them: drop, rename, truncate (of the table or a partition) and, new with Hive,
 * {@code alter} when the columns change (ADD / REPLACE / CHANGE COLUMNS, partition keys).
 *
 * <p>Each event is one node whose class is the metastore event's and whose {@code ddl} says what
 * changed. Only committed changes ({@code event.getStatus()}) are published; the callbacks take a
 * snapshot and return at once, and catch every Throwable, so the metastore never waits for Kafka
 * and never fails a DDL because of colline.
 */
public class CollineMetastoreListener extends MetaStoreEventListener {
  public CollineMetastoreListener(Configuration conf) {
    super(conf);
  }

  @Override
  public void onDropTable(DropTableEvent e) {
    guard(e, () -> {
      Table t = e.getTable();
      return t == null || t.isTemporary() ? null : new DdlEvent(e, "drop", t, null, null, null);
    });
  }

  @Override
  public void onAlterTable(AlterTableEvent e) {
    guard(e, () -> {
      Table before = e.getOldTable();
      Table after = e.getNewTable();
      if (before == null || after == null || before.isTemporary()) return null;
      if (!same(before.getDbName(), after.getDbName()) || !same(before.getTableName(), after.getTableName())) {
        return new DdlEvent(e, "rename", before, after, null, null);
      }
      if (e.getIsTruncateOp()) return new DdlEvent(e, "truncate", before, null, null, null);
      List<FieldSchema> was = columns(before);
      List<FieldSchema> now = columns(after);
      if (was.equals(now)) return null; // properties, statistics, location, owner: no identity change
      Set<String> kept = new HashSet<>();
      for (FieldSchema f : now) kept.add(f.getName().toLowerCase(java.util.Locale.ROOT));
      List<String> dropped = new ArrayList<>();
      for (FieldSchema f : was) if (!kept.contains(f.getName().toLowerCase(java.util.Locale.ROOT))) dropped.add(f.getName());
      return new DdlEvent(e, "alter", after, null, now, dropped);
    });
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent e) {
    guard(e, () -> e.getIsTruncateOp() && e.getTable() != null && !e.getTable().isTemporary()
        ? new DdlEvent(e, "truncate", e.getTable(), null, null, null) : null);
  }

  /** The data columns, then the partition keys (names and types, as the metastore keeps them). */
  private static List<FieldSchema> columns(Table t) {
    List<FieldSchema> out = new ArrayList<>();
    if (t.getSd() != null && t.getSd().getCols() != null) {
      for (FieldSchema f : t.getSd().getCols()) out.add(new FieldSchema(f.getName(), f.getType(), null));
    }
    if (t.getPartitionKeys() != null) {
      for (FieldSchema f : t.getPartitionKeys()) out.add(new FieldSchema(f.getName(), f.getType(), null));
    }
    return out;
  }

  private static boolean same(String a, String b) {
    return a == null ? b == null : a.equalsIgnoreCase(b);
  }

  private interface Snapshot {
    DdlEvent take() throws Exception;
  }

  private void guard(ListenerEvent e, Snapshot s) {
    Publisher p = null;
    try {
      if (e == null || !e.getStatus()) return; // a failed change changed nothing
      Config cfg = Config.from(getConf());
      if (!cfg.enabled) return;
      p = Colline.publisher(cfg);
      p.metrics.seen.incrementAndGet();
      Faults.maybeThrow(cfg, "listener");
      DdlEvent d = s.take();
      if (d == null) {
        p.metrics.droppedNoLineage.incrementAndGet();
      } else {
        d.cfg = cfg;
        d.defaultCatalog = getConf().get("metastore.catalog.default", "hive");
        p.offer(d);
      }
    } catch (Throwable t) {
      if (p != null) {
        p.metrics.internalErrors.incrementAndGet();
        p.log.warn("metastore", "failed to take a metastore event (the metastore is not affected)", t);
      }
    }
  }

  /** A DDL change, taken from the metastore's objects on the metastore's thread. */
  private static final class DdlEvent implements Publisher.Pending {
    final String eventId = UUID.randomUUID().toString();
    final String eventClass;
    String defaultCatalog = "hive";
    final String action;
    final Events.Table dataset;
    final Events.Table to;
    final List<Events.Column> columns; // alter: the columns after the change
    final List<String> dropped; // alter: the columns no longer there
    final String user;
    final long at = System.currentTimeMillis();
    Config cfg;

    DdlEvent(ListenerEvent e, String action, Table t, Table to, List<FieldSchema> columns, List<String> dropped) {
      this.eventClass = e.getClass().getName();
      this.action = action;
      this.dataset = identity(t);
      this.to = to == null ? null : identity(to);
      this.dropped = dropped;
      if (columns == null) {
        this.columns = null;
      } else {
        this.columns = new ArrayList<>();
        for (FieldSchema f : columns) this.columns.add(new Events.Column(f.getName(), f.getType()));
      }
      String u = "";
      try {
        u = UserGroupInformation.getCurrentUser().getShortUserName();
      } catch (Throwable ignored) {
        // no user
      }
      this.user = u;
    }

    /** By name only, as the Spark listener's DDL: a dropped table has no location left to read. */
    private static Events.Table identity(Table t) {
      String type = Events.tableType(t.getTableType());
      return new Events.Table("VIEW".equals(type) ? "view" : "table", t.getCatName(), t.getDbName(), t.getTableName(),
          null, null, null, null);
    }

    private Events.Table named(Events.Table t) {
      return new Events.Table(t.kind, Events.catalog(t.catalog, defaultCatalog), t.db, t.name, null, null, null, null);
    }

    @Override
    public String key() {
      return "hive-metastore:" + dataset.db + "." + dataset.name;
    }

    @Override
    public String kind() {
      return eventClass.substring(eventClass.lastIndexOf('.') + 1);
    }

    @Override
    public JsonObject build(Redact r) {
      String job = cfg.jobName != null ? cfg.jobName : "hive-metastore";
      JsonObject e = Events.envelope(eventId, "colline-hive-metastore-listener",
          new Events.App("hive-metastore", job, user, cfg.namespace),
          new Events.Query("ddl", null, -1, at));
      e.addProperty("root", 0);
      JsonObject node = new JsonObject();
      node.addProperty("id", 0);
      node.addProperty("class", eventClass);
      node.add("children", new JsonArray());
      node.add("output", new JsonArray());
      JsonObject ddl = new JsonObject();
      ddl.addProperty("action", action);
      ddl.add("dataset", named(dataset).json(r));
      if (to != null) ddl.add("to", named(to).json(r));
      if (columns != null) {
        JsonArray cs = new JsonArray();
        for (Events.Column c : columns) {
          JsonObject o = new JsonObject();
          o.addProperty("name", r.name(c.name));
          o.addProperty("type", c.type);
          cs.add(o);
        }
        ddl.add("columns", cs);
        JsonArray ds = new JsonArray();
        for (String d : dropped) ds.add(r.name(d));
        ddl.add("dropped", ds);
      }
      node.add("ddl", ddl);
      JsonArray nodes = new JsonArray();
      nodes.add(node);
      e.add("nodes", nodes);
      return e;
    }
  }
}
