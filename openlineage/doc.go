// Package openlineage reads OpenLineage events (RunEvent, DatasetEvent, JobEvent) and checks them
// against the OpenLineage specification's JSON Schemas (core 2-0-2 and its facets), so that colline
// can accept lineage from any OpenLineage producer — openlineage-spark, dbt-ol, Airflow, Flink — and
// emit its own.
//
// The schemas are embedded from spec/, a verbatim copy of ../shared/data/openlineage/spec that
// dev/openlineage/sync-spec makes: the consumer validates at run time, where ../shared is absent,
// and a test fails when the copy drifts from ../shared.
//
// Validation is strict where the spec is: every event against the core schema (formats such as
// uuid, date-time and uri asserted), and every standard facet against its own schema, chosen by
// the file name in its _schemaURL (same major version). Facets the spec does not define (a
// producer's own, such as openlineage-spark's spark_properties) are checked only for the core
// facet shape and listed in the Report as unchecked. An invalid event gets an *InvalidError that
// names each failing JSON location.
//
// This package is pure: bytes in, events and reports out, no I/O.
package openlineage
