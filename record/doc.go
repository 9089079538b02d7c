// Package record is what the stages of colline hand each other: an Item is one event (a listener
// event or an OpenLineage event) with the lineage extracted from it. The processing steps make
// items (process.Step, the OpenLineage intake's Step) and Check them; Check marks an item that
// passes, so that the graph writer, which checks what it is given, does not check it again. The
// Kafka loop batches items, the graph writer stores them and the OpenLineage emitter publishes
// them again. Job keys (JobKey) and the time an event is stamped with (EventTime) are defined
// here, once, so that every stage agrees on them.
//
// It is pure: no I/O, no drivers; it depends only on events and plan.
package record
