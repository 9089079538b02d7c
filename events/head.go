package events

import "errors"

// The head and the plan of an event, for reusing the lineage of a plan seen before
// (process.Reuse): the same job re-run with the same code sends the same plan, byte for byte,
// under a new event id, application id and times. The listener writes the key "nodes" last, so an
// event is its head (every key before "nodes", small) and its plan (the rest, nearly all of it).

// errHead stops the decoder at the key "nodes" (DecodeHead).
var errHead = errors.New("stopped at the plan")

// DecodeHead decodes the head of an event, the keys before "nodes", and returns them with the
// plan: the event's bytes after the key "nodes", its value and whatever follows it to the end. The
// head is decoded and checked as Decode checks it; the plan is neither decoded nor checked, and
// the envelope has no nodes. ok is false when the event has no head to split off (no key "nodes",
// no schemaVersion before it, a Hive body) or its head is invalid: Decode the event then, which
// says what is wrong.
//
// The head costs a few hundred bytes of decoding, whatever the plan's size: the plan's bytes can
// then be compared with those of an event decoded before (DecodeWithPlan).
func DecodeHead(data []byte) (env *Envelope, plan []byte, ok bool) {
	if len(data) == 0 {
		return nil, nil, false
	}
	d := newDecoder(data)
	d.head = true
	env = new(Envelope)
	version, err := d.envelope(env)
	if !errors.Is(err, errHead) || version == nil || env.Hive != nil || env.validateHead() != nil {
		return nil, nil, false
	}
	return env, data[d.planAt:], true
}

// DecodeWithPlan is Decode, and also returns the event's plan as DecodeHead returns it when
// "nodes" is the event's last key (then the plan is the nodes' value and the object's end); nil
// otherwise. An event that DecodeHead splits into a valid head and the same plan bytes is
// therefore valid as a whole and has the same nodes.
func DecodeWithPlan(data []byte) (env *Envelope, plan []byte, err error) {
	d, env, err := decode(data)
	if err != nil {
		return nil, nil, err
	}
	if d.planLast {
		plan = data[d.planAt:]
	}
	return env, plan, nil
}
