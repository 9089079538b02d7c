package io.colline.listener.analyze

import scala.util.Try

import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression
import org.apache.spark.sql.catalyst.plans.logical.{Command, LogicalPlan}

import io.colline.listener.Nodes

/**
 * The statement kinds the analyzer accepts, and what becomes of each. A statement passes two gates:
 *
 *  1. before analysis, on the plan Spark parsed (`beforeAnalysis`): a statement kind in `Refused`
 *     is refused with its reason; a command (a root that is a Spark `Command`) must be one of
 *     `Commands`, or it is refused as unknown; a query is analyzed. Anywhere in the plan, the
 *     nodes that Spark's analyzer would execute or read files for are refused (`RunsDuringAnalysis`,
 *     a time travel to a subquery, a path read).
 *  2. after analysis, on the analyzed plan's root (`Registrar.register`): a statement that defines
 *     something the later statements need is registered by colline's code (see Registrar); one
 *     that would change the catalog in a way analysis does not need is reported `NotApplied` with
 *     the reason of `NotApplied` below; any other is analyzed only.
 *
 * Nothing a statement does is ever executed. `AllowlistTest` holds every statement kind of
 * Spark's grammar (3.5 and 4.1) to its outcome.
 */
private[listener] object Allowlist {
  /** Parsed roots refused before analysis, and why. */
  val Refused: Map[String, String] = {
    val functions = "a function is a class (or a SQL body) the analyzer does not load: put the function's jar on the analyzer's classpath to analyze calls of it"
    val variables = "session variables are not defined by the analyzer (their values would have to be computed)"
    val pipelines = "a pipeline definition is analyzed by Spark Declarative Pipelines, not by colline's analyzer"
    Map(
      "AddJarsCommand" -> "ADD JAR loads a jar: the analyzer loads no code",
      "AddFilesCommand" -> "ADD FILE fetches a file: the analyzer reads no files",
      "AddArchivesCommand" -> "ADD ARCHIVE fetches an archive: the analyzer reads no files",
      "CreateFunction" -> functions,
      "CreateFunctionCommand" -> functions,
      "CreateUserDefinedFunction" -> functions,
      "CreateSQLFunctionCommand" -> functions,
      "CreateTempViewUsing" -> ("a temporary view over a data source (USING … OPTIONS) reads its files or connects to its " +
        "source to know its columns: the analyzer reads nothing; define a table with its columns instead"),
      "CreateVariable" -> variables,
      "SetVariable" -> variables,
      "DropVariable" -> variables,
      "UnresolvedExecuteImmediate" -> "EXECUTE IMMEDIATE runs its SQL while Spark analyzes it",
      "ExecuteImmediateQuery" -> "EXECUTE IMMEDIATE runs its SQL while Spark analyzes it",
      "Call" -> "CALL runs a procedure while Spark analyzes it",
      "CompoundBody" -> "a SQL script runs its statements while Spark analyzes it",
      "CreateMaterializedViewAsSelect" -> pipelines,
      "CreateStreamingTableAsSelect" -> pipelines,
      "CreateFlowCommand" -> pipelines)
  }

  /**
   * Parsed roots that are commands and are analyzed (then registered or not, see Registrar):
   * Spark's analysis of each reads nothing and runs nothing. The names are those of Spark 3.3
   * to 4.1 (a kind that a line lacks is simply absent from its plans).
   */
  val Commands: Set[String] = Set(
    // session
    "SetCommand", "ResetCommand", "SetCatalogAndNamespace", "SetNamespaceCommand", "SetCatalogCommand",
    // databases
    "CreateNamespace", "CreateDatabaseCommand", "DropNamespace", "DropDatabaseCommand", "SetNamespaceProperties",
    "UnsetNamespacePropertiesCommand", "SetNamespaceLocation", "CommentOnNamespace", "ShowNamespaces",
    "ShowNamespacesCommand", "DescribeNamespace", "ShowCurrentNamespaceCommand", "ShowCatalogsCommand",
    // tables and views
    "CreateTable", "CreateTableStatement", "CreateTableAsSelect", "CreateTableAsSelectStatement", "ReplaceTable",
    "ReplaceTableStatement", "ReplaceTableAsSelect", "ReplaceTableAsSelectStatement", "CreateTableLikeCommand",
    "CreateView", "CreateViewCommand", "AlterViewAs", "AlterViewSchemaBinding", "RenameTable", "AddColumns",
    "RenameColumn", "DropColumns", "AlterColumn", "AlterColumns", "ReplaceColumns", "SetTableProperties",
    "UnsetTableProperties", "SetTableSerDeProperties", "AddPartitions", "RenamePartitions", "DropPartitions",
    "SetTableLocation", "RecoverPartitions", "AlterTableClusterBy", "AlterTableCollation", "AddCheckConstraint",
    "AddConstraint", "DropConstraint", "DropTable", "DropView", "CreateIndex", "DropIndex", "CommentOnTable",
    "TruncateTable", "RepairTable", "LoadData", "AnalyzeTable", "AnalyzeTables", "AnalyzeColumn",
    "RefreshTable", "CacheTable", "CacheTableAsSelect", "UncacheTable", "ClearCacheCommand",
    // data
    "DeleteFromTable", "UpdateTable", "MergeIntoTable",
    // showing and describing
    "DescribeRelation", "DescribeColumn", "DescribeFunction", "DescribeQueryCommand", "DescribeProcedureCommand",
    "ExplainCommand", "ShowTables", "ShowTableExtended", "ShowTablesExtended", "ShowViews", "ShowPartitions",
    "ShowColumns", "ShowCreateTable", "ShowTableProperties", "ShowFunctions", "ShowProceduresCommand",
    "RefreshFunction", "RefreshResource", "DropFunction", "ListJarsCommand", "ListFilesCommand",
    "ListArchivesCommand")

  /** Nodes, anywhere in a parsed plan, that Spark's analyzer would execute. */
  val RunsDuringAnalysis: Map[String, String] = Map(
    "UnresolvedExecuteImmediate" -> Refused("UnresolvedExecuteImmediate"),
    "ExecuteImmediateQuery" -> Refused("ExecuteImmediateQuery"),
    "Call" -> Refused("Call"),
    "CompoundBody" -> Refused("CompoundBody"),
    "UnresolvedTranspose" -> "TRANSPOSE collects the rows of its input while Spark analyzes it",
    "UnresolvedDataSource" -> "a data source read by format and options reads its files or connects to know its columns")

  /** Data sources that Spark would read by path in `<format>.`<path>``. */
  val PathFormats: Set[String] = Set("parquet", "orc", "csv", "json", "text", "avro", "binaryfile", "xml", "delta",
    "hudi", "iceberg", "jdbc", "libsvm", "image")

  /** Catalog-changing kinds (analyzed roots) that are analyzed but not applied, and why. */
  val NotApplied: Map[String, String] = {
    val location = "locations are never used by the analyzer"
    val metadata = "it changes nothing the analysis of later statements needs: not applied"
    Map(
      "SetNamespaceLocation" -> location,
      "AlterTableSetLocationCommand" -> location,
      "AlterTableAddPartitionCommand" -> s"partitions are not registered ($location)",
      "AlterTableDropPartitionCommand" -> "partitions are not registered",
      "AlterTableRenamePartitionCommand" -> "partitions are not registered",
      "RepairTableCommand" -> "partitions are not registered (recovering them would list the table's files)",
      "AlterTableSerDePropertiesCommand" -> "a table's SerDe is not changed (the analyzer loads no SerDe class)",
      "SetNamespaceProperties" -> metadata,
      "UnsetNamespacePropertiesCommand" -> metadata,
      "CommentOnNamespace" -> metadata,
      "CommentOnTable" -> metadata,
      "AlterTableSetPropertiesCommand" -> metadata,
      "AlterTableUnsetPropertiesCommand" -> metadata,
      "AlterTableChangeColumnCommand" -> metadata,
      "AlterViewSchemaBindingCommand" -> metadata,
      "AlterTableCollation" -> metadata,
      "CreateIndex" -> metadata,
      "DropIndex" -> metadata,
      "CacheTable" -> "nothing is cached",
      "UncacheTable" -> "nothing is cached",
      "ClearCacheCommand" -> "nothing is cached",
      "AnalyzeTableCommand" -> "statistics are not computed",
      "AnalyzeTablesCommand" -> "statistics are not computed",
      "AnalyzeColumnCommand" -> "statistics are not computed",
      "AnalyzePartitionCommand" -> "statistics are not computed",
      "RefreshTableCommand" -> "nothing is cached",
      "RefreshResource" -> "nothing is cached")
  }

  /** None when the parsed statement may be analyzed, else the reason it is refused. */
  def beforeAnalysis(parsed: LogicalPlan): Option[String] = {
    val root = Nodes.shortName(parsed)
    Refused.get(root)
      .orElse(if (parsed.isInstanceOf[Command] && !Commands(root)) Some(s"$root: not a statement kind the analyzer knows") else None)
      .orElse(inside(parsed))
  }

  /** The first node of the plan (its subqueries included) that analysis would execute or read for. */
  private def inside(plan: LogicalPlan): Option[String] = {
    var found: Option[String] = None
    def visit(p: LogicalPlan): Unit = if (found.isEmpty) {
      val name = Nodes.shortName(p)
      found = RunsDuringAnalysis.get(name)
        .orElse(if (executableDuringAnalysis(p)) Some(s"$name runs while Spark analyzes it") else None)
        .orElse(timeTravelSubquery(p))
        .orElse(pathRead(p))
      if (found.isEmpty) {
        p.children.foreach(visit)
        p.expressions.foreach(_.foreach {
          case s: SubqueryExpression => visit(s.plan)
          case _ =>
        })
        Try(p.innerChildren).toOption.getOrElse(Nil).foreach {
          case q: LogicalPlan => visit(q)
          case _ =>
        }
      }
    }
    visit(plan)
    found
  }

  /** Spark 4's marker of plans its analyzer executes (by name: the trait is absent from Spark 3). */
  private def executableDuringAnalysis(p: LogicalPlan): Boolean = {
    def has(c: Class[_]): Boolean = c != null &&
      (c.getName == "org.apache.spark.sql.catalyst.plans.logical.ExecutableDuringAnalysis" ||
        c.getInterfaces.exists(has) || has(c.getSuperclass))
    has(p.getClass)
  }

  /** `t TIMESTAMP AS OF (SELECT …)`: Spark runs the subquery while it analyzes the statement. */
  private def timeTravelSubquery(p: LogicalPlan): Option[String] =
    if (Nodes.shortName(p) != "RelationTimeTravel") None
    else if (p.expressions.exists(_.find(_.isInstanceOf[SubqueryExpression]).isDefined))
      Some("a time travel to a subquery's result runs the subquery while Spark analyzes it")
    else None

  /** ``csv.`/data/x.csv` ``: a read of files by path (Spark would list and read them to know the columns). */
  private def pathRead(p: LogicalPlan): Option[String] = p match {
    case u: UnresolvedRelation =>
      u.multipartIdentifier match {
        case Seq(format, path) if PathFormats(format.toLowerCase) && (path.contains("/") || path.contains(":") || path.contains("\\")) =>
          Some(s"$format.`…`: a read of files by path; the analyzer reads no files (define a table with the columns instead)")
        case _ => None
      }
    case _ => None
  }
}
