package io.colline.listener

import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The catalog table a path is, where the catalog knows it: a Delta (or Parquet, …) table written
 * by name and read by path, or the reverse, is one dataset, keyed by its name.
 *
 * A catalog has no index from location to table, and the listener must not list a metastore. Two
 * ways find the table without that, both on the publisher thread, never the job's:
 *
 *  - the tables this JVM has seen: every catalog table the listener describes brings its
 *    location, and so does a `CREATE TABLE … LOCATION '/x'` (a table read or written by path
 *    later in the same application);
 *  - Spark's own rule for a managed table's location, `<database location>/<table>`: a path whose
 *    parent is the location of database `db` (`…/db.db`, or the warehouse for `default`) can only
 *    be managed table `db.<last segment>`, which one catalog lookup confirms (its location must be
 *    the path). One lookup per path and JVM: answers are kept (bounded), misses for a minute.
 *
 * An external table that this JVM never named stays a path (docs/lineage-semantics.md).
 */
private[listener] object Tables {
  private val seen = new Bounded[String, J.Obj](10000)
  private val probed = new Bounded[String, (Option[J.Obj], Long)](10000)
  private val MissTtlMs = 60000L
  /** The session catalog's default database, whose managed tables live in the warehouse itself. */
  private val DefaultDatabase = "default"

  /** Records the location of a catalog table the listener described (kind `table`, `location`). */
  def learn(table: J.Obj): Unit = Try {
    (table.get("kind"), table.get("location")) match {
      case (Some(J.Str("table")), Some(J.Str(loc))) if loc.nonEmpty => seen.put(normalize(qualify(loc)), copy(table))
      case _ =>
    }
  }

  /**
   * Records the location of a table a `CREATE TABLE … LOCATION` creates (a command without
   * lineage, not published): v1 `CreateTableCommand` / `CreateDataSourceTableCommand` (`table`),
   * v2 `CreateTable` (`name`, `tableSpec.location`).
   */
  def learnCreated(p: LogicalPlan): Unit = Try {
    Reflect.call(p, "table") match {
      case Some(ct: CatalogTable) => if (ct.storage.locationUri.isDefined) Nodes.tableDataset(ct)
      case _ => Versioned.createdTable(p).foreach(learn)
    }
  }

  /** Whether an identifier part is a path (`/x`, `file:/x`, `s3a://b/x`): a table named by path. */
  def isPath(s: String): Boolean = s != null && (s.startsWith("/") || s.matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*"))

  /** Forgets the locations of a dropped or renamed table (kind, catalog, namespace, name). */
  def forget(table: J.Obj): Unit = Try {
    val key = identity(table)
    seen.entries.foreach { case (loc, t) => if (identity(t) == key) seen.remove(loc) }
    probed.entries.foreach { case (loc, (t, _)) => if (t.exists(identity(_) == key)) probed.remove(loc) }
  }

  /** The table dataset at a qualified path, or None: the path is the dataset. */
  def atPath(path: String): Option[J.Obj] = Try {
    val loc = normalize(qualify(path))
    seen.get(loc).map(copy).orElse {
      val now = System.currentTimeMillis()
      probed.get(loc) match {
        case Some((hit @ Some(_), _)) => hit.map(copy)
        case Some((None, at)) if now - at < MissTtlMs => None
        case _ =>
          val found = managed(loc)
          probed.put(loc, (found, now))
          found.map(copy)
      }
    }
  }.toOption.flatten

  /** The managed table of the session catalog whose default location is loc, if there is one. */
  private def managed(loc: String): Option[J.Obj] = {
    val session = this.session
    val slash = loc.lastIndexOf('/')
    if (session == null || slash <= 0) return None
    val (parent, name) = (loc.substring(0, slash), loc.substring(slash + 1))
    val parentName = parent.substring(parent.lastIndexOf('/') + 1)
    val catalog = session.sessionState.catalog
    val db =
      if (parentName.endsWith(".db")) Some(parentName.stripSuffix(".db"))
      else Try(catalog.getDatabaseMetadata(DefaultDatabase).locationUri.toString).toOption
        .filter(u => normalize(u) == parent).map(_ => DefaultDatabase)
    db.filter(d => name.nonEmpty && Try(catalog.databaseExists(d)).getOrElse(false)).flatMap { d =>
      Try(catalog.getTableMetadata(TableIdentifier(name, Some(d)))).toOption
        .filter(ct => ct.storage.locationUri.exists(u => normalize(u.toString) == loc))
        .map(ct => Nodes.tableDataset(ct))
    }
  }

  private def session: SparkSession = SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).orNull

  /** A path as given to a writer (`/x`) qualified on the default file system (`file:/x`). */
  private def qualify(path: String): String =
    if (path.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) path
    else Try {
      val p = new org.apache.hadoop.fs.Path(path)
      p.getFileSystem(session.sessionState.newHadoopConf()).makeQualified(p).toString
    }.getOrElse(path)

  /** A location compared as Spark writes it: `file:/x` and `file:///x` alike, no trailing slash. */
  private def normalize(loc: String): String =
    loc.replaceFirst("^file:///", "file:/").stripSuffix("/")

  private def identity(t: J.Obj): String = {
    def s(k: String) = t.get(k) match { case Some(J.Str(v)) => v; case _ => "" }
    val ns = t.get("namespace") match {
      case Some(a: J.Arr) => a.items.collect { case J.Str(v) => v }.mkString(".")
      case _ => ""
    }
    (s("catalog") + "/" + ns + "." + s("name")).toLowerCase(java.util.Locale.ROOT)
  }

  /**
   * A table as remembered, without its tags (`columnComments`, `tagProperties`): they are the
   * catalog's as of the query that described the table, which may be older than this query (an
   * `ALTER … COMMENT` since), and an event that leaves them out says nothing of tags.
   */
  private def copy(t: J.Obj): J.Obj = {
    val o = new J.Obj
    t.fields.foreach { case (k, v) => if (!Untold(k)) o.put(k, v) }
    o
  }

  private val Untold = Set("columnComments", "tagProperties")
}
