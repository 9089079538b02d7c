package impact

import "github.com/colline/colline/tags"

// ExitTagPolicy is the exit code of a change whose lineage would carry a tag, unmasked, into a
// dataset the tag's settings do not allow (docs/tags.md); it wins over ExitBreaking and ExitAlters.
const ExitTagPolicy = 5

// TagArrival is a tag that a change carries, unmasked, into a column of a dataset that its
// settings do not allow: the policy before a run.
type TagArrival = tags.Violation

// WithTags adds the policy step to the report: the tags the change carries (tags.Carry over the
// change's lineage, from the tags its sources carry in the graph) where their settings do not
// allow them. Any such arrival fails the change (ExitTagPolicy) unless FailOn is never.
func (r *Report) WithTags(arrivals []TagArrival) {
	r.TagArrivals = arrivals
	if r.TagArrivals == nil {
		r.TagArrivals = []TagArrival{}
	}
	r.Summary.TagArrivals = len(arrivals)
	if len(arrivals) > 0 && r.FailOn != FailOnNever {
		r.Exit = ExitTagPolicy
	}
}
