package io.colline.listener.analyze

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable, CatalogTableType}
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.apache.spark.sql.catalyst.util.CharVarcharUtils
import org.apache.spark.sql.types.{DataType, StructField, StructType}

/** A column of a table given as data: its type is one Spark SQL type, e.g. `decimal(10,2)`. */
private[listener] final case class ColumnSpec(name: String, dataType: String, nullable: Boolean = true)

/**
 * A table given as data (the request's `tables`): from the graph, a metastore, a DDL file or
 * inferred. `name` is `db.table` as Spark reads a name (backquotes for odd characters). It
 * enters the analyzer's own catalog through the catalog API; nothing of it is ever SQL text.
 */
private[listener] final case class TableSpec(
    name: String,
    columns: Seq[ColumnSpec],
    partitionColumns: Seq[String] = Nil,
    provider: String = "parquet",
    source: String = "")

/** Turns a TableSpec into a CatalogTable, validating each part, or says what is wrong with it. */
private[listener] object Tables {
  val MaxColumns = 10000
  val MaxTypeChars = 10000
  val Sources: Set[String] = Set("", "graph", "ddl", "metastore", "inferred")

  /** The table, or why it cannot be defined (naming the column at fault). */
  def catalogTable(t: TableSpec, defaultDb: String): Either[String, CatalogTable] = {
    val ident = try CatalystSqlParser.parseMultipartIdentifier(t.name) catch {
      case NonFatal(_) => return Left(s"name ${quoted(t.name)} is not a table name (db.table)")
    }
    val id = ident match {
      case Seq(table) => TableIdentifier(table, Some(defaultDb))
      case Seq(db, table) => TableIdentifier(table, Some(db))
      case Seq(cat, db, table) if cat.equalsIgnoreCase(Registrar.SessionCatalog) => TableIdentifier(table, Some(db))
      case _ => return Left(s"name ${quoted(t.name)}: only tables of the session catalog (db.table) are defined")
    }
    if (!Sources(t.source)) return Left(s"source ${quoted(t.source)}: want one of ${Sources.filter(_.nonEmpty).toSeq.sorted.mkString(", ")}")
    if (!Registrar.FileFormats(t.provider.toLowerCase)) return Left(s"provider ${quoted(t.provider)}: want one of ${Registrar.FileFormats.toSeq.sorted.mkString(", ")}")
    if (t.columns.isEmpty) return Left("no columns")
    if (t.columns.size > MaxColumns) return Left(s"${t.columns.size} columns: at most $MaxColumns")
    val fields = t.columns.map { c =>
      if (c.name.isEmpty) return Left("a column has an empty name")
      dataType(c.dataType) match {
        case Left(why) => return Left(s"column ${quoted(c.name)}: $why")
        case Right(dt) => StructField(c.name, dt, c.nullable)
      }
    }
    val dup = fields.groupBy(_.name.toLowerCase).collectFirst { case (_, fs) if fs.size > 1 => fs.head.name }
    if (dup.isDefined) return Left(s"column ${quoted(dup.get)} appears twice")
    val missing = t.partitionColumns.filterNot(p => fields.exists(_.name.equalsIgnoreCase(p)))
    if (missing.nonEmpty) return Left(s"partition column ${quoted(missing.head)} is not a column")
    if (t.partitionColumns.nonEmpty && t.partitionColumns.size == fields.size) return Left("every column is a partition column")
    // as Spark stores a table: partition columns last, char/varchar as strings (with their raw type in metadata)
    val parts = t.partitionColumns.map(p => fields.find(_.name.equalsIgnoreCase(p)).get)
    val schema = CharVarcharUtils.replaceCharVarcharWithStringInSchema(StructType(fields.filterNot(parts.contains) ++ parts))
    Right(CatalogTable(
      identifier = id,
      tableType = CatalogTableType.MANAGED,
      storage = CatalogStorageFormat.empty,
      schema = schema,
      provider = Some(t.provider.toLowerCase),
      partitionColumnNames = parts.map(_.name),
      tracksPartitionsInCatalog = parts.nonEmpty))
  }

  /** One Spark SQL type, parsed as a type and nothing else. */
  def dataType(s: String): Either[String, DataType] = {
    if (s == null || s.trim.isEmpty) return Left("no type")
    if (s.length > MaxTypeChars) return Left(s"a type of ${s.length} characters: at most $MaxTypeChars")
    try Right(CatalystSqlParser.parseDataType(s)) catch {
      case NonFatal(e) =>
        val first = String.valueOf(e.getMessage).split("\n").map(_.trim).find(_.nonEmpty).getOrElse("")
        Left(s"type ${quoted(Analyzer.head(s))} is not one Spark SQL type: " + Analyzer.head(first))
    }
  }

  /** A value in a message, in JSON-like double quotes. */
  def quoted(s: String): String = "\"" + String.valueOf(s).replace("\\", "\\\\").replace("\"", "\\\"") + "\""
}
