package io.colline.hive;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.hive.ql.QueryPlan;
import org.apache.hadoop.hive.ql.hooks.LineageLogger;
import org.apache.hadoop.hive.ql.optimizer.lineage.LineageCtx;

/**
 * Hive's own column lineage of a query: the edges and vertices that LineageLogger logs, computed by
 * LineageLogger itself ({@code getEdges}, {@code getVertices}; public since Hive 3). The one place that
 * reaches into Hive by reflection: LineageLogger.Edge has no getters, so its four fields are read
 * by name. If a Hive version renames them, the event carries no edges and the failure is counted.
 */
final class HiveLineage {
  /** One edge: vertex ids, Hive's expression (null: the source column as it is), PROJECTION or PREDICATE. */
  static final class Edge {
    final int[] sources;
    final int[] targets;
    final String expression;
    final String type;

    Edge(int[] sources, int[] targets, String expression, String type) {
      this.sources = sources;
      this.targets = targets;
      this.expression = expression;
      this.type = type;
    }
  }

  /** One vertex: id, COLUMN or TABLE, and Hive's label (db.table.column, db.table, or a result column name). */
  static final class Vertex {
    final int id;
    final String type;
    final String label;

    Vertex(int id, String type, String label) {
      this.id = id;
      this.type = type;
      this.label = label;
    }
  }

  final List<Edge> edges = new ArrayList<>();
  final List<Vertex> vertices = new ArrayList<>();

  private static final Field SOURCES = field("sources");
  private static final Field TARGETS = field("targets");
  private static final Field EXPR = field("expr");
  private static final Field TYPE = field("type");

  private static Field field(String name) {
    try {
      Field f = LineageLogger.Edge.class.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (Throwable t) {
      return null;
    }
  }

  /** Computes the lineage on the calling (Hive's) thread: the plan and index are Hive's and change after the hook. */
  static HiveLineage of(QueryPlan plan, LineageCtx.Index index) throws ReflectiveOperationException {
    if (SOURCES == null || TARGETS == null || EXPR == null || TYPE == null) {
      throw new NoSuchFieldException("LineageLogger.Edge of this Hive has no sources/targets/expr/type fields");
    }
    HiveLineage out = new HiveLineage();
    List<LineageLogger.Edge> edges = LineageLogger.getEdges(plan, index);
    Set<LineageLogger.Vertex> vertices = LineageLogger.getVertices(edges); // assigns the ids
    for (LineageLogger.Vertex v : vertices) out.vertices.add(new Vertex(v.getId(), v.getType().name(), v.getLabel()));
    for (LineageLogger.Edge e : edges) {
      out.edges.add(new Edge(ids((Set<?>) SOURCES.get(e)), ids((Set<?>) TARGETS.get(e)), (String) EXPR.get(e),
          String.valueOf(TYPE.get(e))));
    }
    return out;
  }

  private static int[] ids(Set<?> vs) {
    int[] out = new int[vs == null ? 0 : vs.size()];
    int k = 0;
    if (vs != null) for (Object v : vs) out[k++] = ((LineageLogger.Vertex) v).getId();
    return out;
  }
}
