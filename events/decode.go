package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors a decoded event can fail with. All are permanent: the same bytes always fail the same way.
// ErrInvalidJSON also matches ErrInvalid.
var (
	ErrInvalid            = errors.New("invalid event")
	ErrInvalidJSON        = fmt.Errorf("%w: not JSON", ErrInvalid)
	ErrUnsupportedVersion = errors.New("unsupported schema version")
)

// SupportedMajor is the schema major version this consumer understands.
const SupportedMajor = 1

// Decode parses one event and validates it: schema version, required fields and that every
// node reference points forward inside the node list (so a plan can never be cyclic).
//
// A valid event is parsed in one pass. Only when that fails is the event parsed again the careful
// way, version first, so a future major version is reported as such and not as whatever decoding
// error its new shape would cause.
func Decode(data []byte) (*Envelope, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty message", ErrInvalidJSON)
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return decodeSlow(data)
	}
	if w.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: schemaVersion is missing", ErrInvalid)
	}
	if err := checkVersion(*w.SchemaVersion); err != nil {
		return nil, err
	}
	env := &w.Envelope
	env.SchemaVersion = *w.SchemaVersion
	if err := env.Validate(); err != nil {
		return nil, err
	}
	return env, nil
}

// wire is an Envelope that tells a missing schemaVersion from an empty one. Its SchemaVersion
// hides the embedded one (encoding/json fills the shallower field).
type wire struct {
	Envelope
	SchemaVersion *string `json:"schemaVersion"`
}

// decodeSlow is Decode in two passes: the version alone, then the envelope.
func decodeSlow(data []byte) (*Envelope, error) {
	// Read the version first, so a future major version is reported as such and not as
	// whatever decoding error its new shape would cause.
	var head struct {
		SchemaVersion *string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, jsonError(data, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: schemaVersion is missing", ErrInvalid)
	}
	if err := checkVersion(*head.SchemaVersion); err != nil {
		return nil, err
	}
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := env.Validate(); err != nil {
		return nil, err
	}
	return &env, nil
}

func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%w at byte %d of %d: %v", ErrInvalidJSON, syn.Offset, len(data), err)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
}

func checkVersion(v string) error {
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if !ok || err != nil || n < 0 {
		return fmt.Errorf("%w: schemaVersion %q is not MAJOR.MINOR", ErrInvalid, v)
	}
	if _, err := strconv.Atoi(minor); err != nil {
		return fmt.Errorf("%w: schemaVersion %q is not MAJOR.MINOR", ErrInvalid, v)
	}
	if n != SupportedMajor {
		return fmt.Errorf("%w: schemaVersion %q, this consumer reads %d.x", ErrUnsupportedVersion, v, SupportedMajor)
	}
	return nil
}

// Validate checks the invariants the rest of the consumer relies on.
func (e *Envelope) Validate() error {
	if e.EventID == "" {
		return fmt.Errorf("%w: eventId is missing", ErrInvalid)
	}
	if len(e.Nodes) == 0 {
		return fmt.Errorf("%w: event %s has no plan nodes", ErrInvalid, e.EventID)
	}
	if e.Root < 0 || e.Root >= len(e.Nodes) {
		return fmt.Errorf("%w: event %s: root %d outside nodes[0:%d]", ErrInvalid, e.EventID, e.Root, len(e.Nodes))
	}
	for i := range e.Nodes {
		n := &e.Nodes[i]
		if n.ID != i {
			return fmt.Errorf("%w: event %s: node at index %d has id %d", ErrInvalid, e.EventID, i, n.ID)
		}
		if n.Class == "" {
			return fmt.Errorf("%w: event %s: node %d has no class", ErrInvalid, e.EventID, i)
		}
		ref := func(what string, j int) error {
			if j <= i || j >= len(e.Nodes) {
				return fmt.Errorf("%w: event %s: node %d (%s) %s refers to node %d; references must point forward inside nodes[0:%d]",
					ErrInvalid, e.EventID, i, n.Class, what, j, len(e.Nodes))
			}
			return nil
		}
		for _, c := range n.Children {
			if err := ref("child", c); err != nil {
				return err
			}
		}
		for role, p := range n.Plans {
			if err := ref("plan "+role, p); err != nil {
				return err
			}
		}
		if n.Write != nil && n.Write.Query != nil {
			if err := ref("write query", *n.Write.Query); err != nil {
				return err
			}
		}
		for role, list := range n.Exprs {
			for k := range list {
				if err := walkPlans(&list[k], func(p int) error { return ref("expression "+role, p) }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func walkPlans(x *Expr, f func(int) error) error {
	if x.Plan != nil {
		if err := f(*x.Plan); err != nil {
			return err
		}
	}
	for i := range x.Children {
		if err := walkPlans(&x.Children[i], f); err != nil {
			return err
		}
	}
	return nil
}
