package process

import (
	"errors"

	"github.com/colline/colline/events"
	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// Dead-letter reasons: the value of the consumer's colline.reason header and of its reason label.
const (
	ReasonTooLarge           = "too_large"           // larger than Step.MaxBytes (COLLINE_MAX_EVENT_BYTES)
	ReasonTooDeep            = "too_deep"            // JSON nested deeper than MaxNesting levels
	ReasonInvalidJSON        = "invalid_json"        // not JSON (including an empty message)
	ReasonUnsupportedVersion = "unsupported_version" // a schema major version this consumer does not read
	ReasonInvalidEvent       = "invalid_event"       // JSON, but not a valid event
	ReasonInvalidOpenLineage = "invalid_openlineage" // JSON, but not an OpenLineage event that conforms to the spec
	ReasonTooComplex         = "too_complex"         // no longer given: a plan over a budget (COLLINE_MAX_PLAN_*) keeps its table-level lineage (plan.Lineage.OverBudget); kept for the series and dead letters of earlier versions
	ReasonUnsupportedPlan    = "unsupported_plan"    // plan.Extract failed
	ReasonInvalidLineage     = "invalid_lineage"     // the lineage cannot be stored as it is (record.ErrInvalidItem)
	ReasonWriteRejected      = "write_rejected"      // Neo4j rejected the event's data (found by the consumer, at write time)
	ReasonOther              = "other"               // an error of no known kind
)

// Reasons lists every reason, in the order above.
var Reasons = []string{
	ReasonTooLarge, ReasonTooDeep, ReasonInvalidJSON, ReasonUnsupportedVersion, ReasonInvalidEvent, ReasonInvalidOpenLineage, ReasonTooComplex, ReasonUnsupportedPlan,
	ReasonInvalidLineage, ReasonWriteRejected, ReasonOther,
}

// Reason classifies an error of Step.Item.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, ErrTooDeep):
		return ReasonTooDeep
	case errors.Is(err, events.ErrInvalidJSON), errors.Is(err, openlineage.ErrInvalidJSON):
		return ReasonInvalidJSON
	case errors.Is(err, events.ErrUnsupportedVersion):
		return ReasonUnsupportedVersion
	case errors.Is(err, events.ErrInvalid):
		return ReasonInvalidEvent
	case isInvalidOpenLineage(err):
		return ReasonInvalidOpenLineage
	case errors.Is(err, plan.ErrTooComplex):
		return ReasonTooComplex
	case errors.Is(err, plan.ErrUnsupported):
		return ReasonUnsupportedPlan
	case errors.Is(err, record.ErrInvalidItem):
		return ReasonInvalidLineage
	}
	return ReasonOther
}

// isInvalidOpenLineage reports an event the spec's schemas reject.
func isInvalidOpenLineage(err error) bool {
	var inv *openlineage.InvalidError
	return errors.As(err, &inv)
}
