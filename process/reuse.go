package process

import (
	"container/list"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

// Reuse remembers the lineage of the plans a Step extracted, so that a re-run that sends a plan
// seen before, byte for byte, is neither decoded nor extracted again: production jobs run every
// hour or every day with the same code, and their events differ only in the head (event id,
// application id, times), a few hundred bytes before a plan of tens or hundreds of kilobytes.
//
// A plan's lineage is a function of its bytes and of the few head fields extraction reads (the
// root, the markers, the application's namespace and name, the query's funcName: plan.Extract),
// under one Step's budget and cluster names: those are the key, hashed with a seed drawn per
// process (128 bits, hash/maphash), so no one can choose two events that collide. A hit decodes
// the head only (events.DecodeHead), and checks it as Decode would; the plan's bytes equal those
// of an event decoded and validated in full, so the event is valid. An event that fails is not
// remembered: it fails the same way each time, at full cost.
//
// The lineage a hit returns is shared by every item of that plan: nothing may change it (nothing
// does: the writer, the checks and the metrics read it). Entries are kept least recently used
// first out, up to MaxBytes of estimated lineage. One Reuse serves one Step configuration (the
// consumer has one); it is safe for concurrent use.
type Reuse struct {
	maxBytes int64

	mu      sync.Mutex
	seeds   [2]maphash.Seed
	entries map[reuseKey]*list.Element
	order   list.List // of *reuseEntry, most recently used first
	bytes   int64
	hits    uint64
	misses  uint64
}

type reuseKey [2]uint64

type reuseEntry struct {
	key   reuseKey
	lin   *plan.Lineage
	bytes int64
}

// DefaultReuseMB is the default bound of a Reuse, in MiB of estimated lineage
// (COLLINE_PLAN_REUSE_MB): about 4,500 jobs the size of TPC-DS's CTAS (15 KB of lineage each on
// average, 97 KB the largest).
const DefaultReuseMB = 64

// NewReuse returns a Reuse that keeps up to maxBytes of estimated lineage (0: DefaultReuseMB).
func NewReuse(maxBytes int64) *Reuse {
	if maxBytes <= 0 {
		maxBytes = DefaultReuseMB << 20
	}
	return &Reuse{maxBytes: maxBytes, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		entries: map[reuseKey]*list.Element{}}
}

// Counts returns how many plans were found (hits) and not found (misses).
func (r *Reuse) Counts() (hits, misses uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits, r.misses
}

// Bytes returns the estimated bytes of the lineage kept.
func (r *Reuse) Bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

// key hashes what a plan's lineage depends on (see Reuse).
func (r *Reuse) key(env *events.Envelope, planBytes []byte) reuseKey {
	var k reuseKey
	for i, seed := range r.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(int64(env.Root)))
		h.Write(n[:])
		for _, b := range []bool{env.Markers.NestedWrite, env.Markers.Truncated, env.Markers.Analyzed} {
			if b {
				h.WriteByte(1)
			} else {
				h.WriteByte(0)
			}
		}
		for _, s := range []string{env.App.Namespace, env.App.Name, env.Query.FuncName} {
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.WriteString(s)
		}
		h.Write(planBytes)
		k[i] = h.Sum64()
	}
	return k
}

func (r *Reuse) get(k reuseKey) *plan.Lineage {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[k]
	if !ok {
		r.misses++
		return nil
	}
	r.hits++
	r.order.MoveToFront(e)
	return e.Value.(*reuseEntry).lin
}

func (r *Reuse) put(k reuseKey, lin *plan.Lineage) {
	size := lineageBytes(lin)
	if size > r.maxBytes/4 {
		return // one plan may not take most of the room
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[k]; ok {
		return
	}
	r.entries[k] = r.order.PushFront(&reuseEntry{key: k, lin: lin, bytes: size})
	r.bytes += size
	for r.bytes > r.maxBytes {
		last := r.order.Back()
		e := last.Value.(*reuseEntry)
		r.order.Remove(last)
		delete(r.entries, e.key)
		r.bytes -= e.bytes
	}
}

// lineageBytes estimates the memory lin holds: its strings and the structs and slices around
// them.
func lineageBytes(lin *plan.Lineage) int64 {
	const (
		str   = int64(unsafe.Sizeof(""))
		edge  = int64(unsafe.Sizeof(plan.Edge{}))
		trans = int64(unsafe.Sizeof(plan.Transformation{}))
		col   = int64(unsafe.Sizeof(plan.Column{}))
		ds    = int64(unsafe.Sizeof(plan.Write{}))
	)
	n := int64(unsafe.Sizeof(plan.Lineage{}))
	dataset := func(d *plan.Dataset) {
		n += ds + int64(len(d.Key)+len(d.Namespace)+len(d.Name)+len(d.Kind)+len(d.Location))
		for _, c := range d.Columns {
			n += col + int64(len(c.Key)+len(c.Name)+len(c.Type)+len(c.Parent))
		}
	}
	for i := range lin.Reads {
		dataset(&lin.Reads[i])
	}
	for i := range lin.Writes {
		dataset(&lin.Writes[i].Dataset)
	}
	for _, list := range [][]plan.Edge{lin.Edges, lin.RowDeps} {
		for _, e := range list {
			n += edge + int64(len(e.Source)+len(e.Target))
			for _, t := range e.Transformations {
				n += trans + int64(len(t.Type)+len(t.Subtype)+len(t.Expr)+len(t.Rows))
			}
		}
	}
	for i := range lin.Changes {
		dataset(&lin.Changes[i].Dataset)
	}
	for _, t := range lin.Tags {
		n += 2 * str
		for _, c := range t.Tags {
			n += 3*str + int64(len(c.Column)+len(c.Key)+len(c.Value))
		}
	}
	n += int64(len(lin.Unknown)) * 4 * str
	return n
}
