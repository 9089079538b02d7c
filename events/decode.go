package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
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
// Decoding is strict: keys match the field names exactly (a key that differs from one only in case
// is an error, other unknown keys are skipped: a minor version only adds fields), a key may not
// repeat in an object, strings are valid UTF-8, and schemaVersion is MAJOR.MINOR in digits. Every
// error says where: the byte offset and the path (`nodes[17].output[2].exprId`).
//
// The event is decoded in one streaming pass over its tokens (github.com/go-json-experiment/json's
// jsontext), without reflection and without an intermediate tree. A future major version is
// reported as such, not as whatever decoding error its new shape would cause: the version is
// checked as soon as it is read, and when decoding fails before it was read, the top-level keys
// are scanned for it.
//
// Equal short string arrays of one event (qualifiers, namespaces, column lists, struct field
// names) are one shared slice of exact capacity: a caller must not change their elements.
func Decode(data []byte) (*Envelope, error) {
	_, env, err := decode(data)
	return env, err
}

func decode(data []byte) (*decoder, *Envelope, error) {
	if len(data) == 0 {
		return nil, nil, fmt.Errorf("%w: empty message", ErrInvalidJSON)
	}
	d := newDecoder(data)
	env := new(Envelope)
	version, err := d.envelope(env)
	if err != nil {
		if version == nil {
			if v, ok := scanVersion(data); ok {
				if verr := checkVersion(v); verr != nil {
					return nil, nil, verr
				}
			}
		}
		return nil, nil, d.wrap(err)
	}
	if version == nil {
		return nil, nil, fmt.Errorf("%w: schemaVersion is missing", ErrInvalid)
	}
	if err := env.Validate(); err != nil {
		return nil, nil, err
	}
	return d, env, nil
}

// scanVersion finds the top-level schemaVersion string without decoding anything else.
func scanVersion(data []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if name.String() == "schemaVersion" && dec.PeekKind() == '"' {
			v, err := dec.ReadToken()
			return v.String(), err == nil
		}
		if dec.SkipValue() != nil {
			return "", false
		}
	}
	return "", false
}

// checkVersion enforces the schema's pattern for schemaVersion: MAJOR.MINOR, both in digits, and
// the major version this consumer reads.
func checkVersion(v string) error {
	major, minor, ok := strings.Cut(v, ".")
	if !ok || !digits(major) || !digits(minor) {
		return fmt.Errorf("%w: schemaVersion %q is not MAJOR.MINOR", ErrInvalid, v)
	}
	if major != strconv.Itoa(SupportedMajor) {
		return fmt.Errorf("%w: schemaVersion %q, this consumer reads %d.x", ErrUnsupportedVersion, v, SupportedMajor)
	}
	return nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// decoder decodes one event from its JSON tokens. Errors of its own (a value of the wrong kind, a
// key in the wrong case) are *fieldError; those of jsontext (syntax, duplicate keys, truncation)
// are *jsontext.SyntacticError or io.ErrUnexpectedEOF; wrap turns both into the event errors.
type decoder struct {
	dec      *jsontext.Decoder
	data     []byte
	key      []byte // unquoted object key, when it had escapes
	intStack []int  // scratch stacks of the arrays being read (take)
	attrs    []Attribute
	exprs    []Expr
	str      []byte              // unquoted string value, when it had escapes
	intern   map[string]string   // repeated short strings of this event (class names, types, roles)
	lists    map[string][]string // repeated short string arrays of this event (qualifiers, field names)
	listKey  []byte              // scratch key of lists

	// head stops the envelope at the key "nodes" (DecodeHead); planAt is the offset just after
	// that key (-1: not read yet), and planLast tells that no key came after the nodes.
	head     bool
	planAt   int64
	planLast bool
}

func newDecoder(data []byte) *decoder {
	return &decoder{
		// Parses data in place, no copy. Duplicate keys are found by object, cheaper.
		dec:    jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true)),
		data:   data,
		intern: make(map[string]string, 64),
		planAt: -1,
	}
}

// fieldError is a value that does not fit its field: where it is and what was expected.
type fieldError struct {
	path   jsontext.Pointer
	offset int64
	msg    string
	key    bool // about a key of the object at path (msg says where)
}

func (e *fieldError) Error() string { return e.msg }

// fail reports that the value just read (raw) is wrong for its field.
func (d *decoder) fail(raw jsontext.Value, format string, args ...any) error {
	return &fieldError{path: d.dec.StackPointer(), offset: d.dec.InputOffset() - int64(len(raw)), msg: fmt.Sprintf(format, args...)}
}

// wrap turns a decoding error into an event error that says where.
func (d *decoder) wrap(err error) error {
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupportedVersion) {
		return err
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		where := path(fe.path)
		switch {
		case fe.key && where == "":
			return fmt.Errorf("%w: %s", ErrInvalid, fe.msg)
		case fe.key:
			return fmt.Errorf("%w: %s: %s", ErrInvalid, where, fe.msg)
		case where == "":
			where = "the event"
		}
		return fmt.Errorf("%w: %s at byte %d: %s", ErrInvalid, where, fe.offset, fe.msg)
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		where := ""
		if p := path(syn.JSONPointer); p != "" {
			where = " (in " + p + ")"
		}
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			if p := path(syn.JSONPointer.Parent()); p != "" {
				return fmt.Errorf("%w: %s: duplicate key %q at byte %d", ErrInvalid, p, syn.JSONPointer.LastToken(), syn.ByteOffset)
			}
			return fmt.Errorf("%w: duplicate key %q at byte %d", ErrInvalid, syn.JSONPointer.LastToken(), syn.ByteOffset)
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%w at byte %d of %d%s: unexpected end of input: the event is cut off", ErrInvalidJSON, syn.ByteOffset, len(d.data), where)
		}
		msg := strings.TrimPrefix(syn.Err.Error(), "jsontext: ")
		return fmt.Errorf("%w at byte %d of %d%s: %s", ErrInvalidJSON, syn.ByteOffset, len(d.data), where, msg)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w at byte %d of %d: unexpected end of input: the event is cut off", ErrInvalidJSON, d.dec.InputOffset(), len(d.data))
	}
	return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
}

// path writes a JSON pointer the way a Go reader looks for it: /nodes/17/output/2/exprId is
// nodes[17].output[2].exprId, and a key that is not a plain name is quoted: exprs["matched.0.condition"].
// (A number is taken as an array index: no key of the event format is a number.)
func path(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		switch {
		case digits(tok):
			b.WriteString("[" + tok + "]")
		case plainName(tok):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// kindName names a JSON kind in an error.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "nothing"
}

// What an object's member function returns instead of the index of a field in known.
const (
	unknownKey = -1 // a key member does not know: object skips its value
	mapKey     = -2 // a key of a map, decoded by member
	dupKey     = -3 // a key of a map that member has seen before: object reports it
)

// object reads an object (or null, which leaves everything as it is), calling member for each key.
// member decodes the value and returns the index of the field in known, or one of the constants
// above. A key may appear once: object rejects a second one, known or not. A key that member does
// not know is skipped, unless it is one of known in another case.
func (d *decoder) object(known []string, member func(key []byte) (int, error)) error {
	switch k := d.dec.PeekKind(); k {
	case '{':
		if _, err := d.dec.ReadToken(); err != nil {
			return err
		}
	case 'n':
		_, err := d.dec.ReadValue()
		return err
	default:
		return d.wrongKind("an object")
	}
	var seen uint64     // fields of known already read
	var others []string // unknown keys already read
	for {
		switch d.dec.PeekKind() {
		case '}':
			_, err := d.dec.ReadToken()
			return err
		case '"':
		default:
			_, err := d.dec.ReadToken() // the syntax error
			return err
		}
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		at := d.dec.InputOffset() - int64(len(raw))
		key := unquote(raw, &d.key)
		f, err := member(key)
		switch {
		case f == dupKey:
			return d.duplicate(string(key), at)
		case err != nil:
			return err
		case f >= 0:
			if seen&(1<<f) != 0 {
				return d.duplicate(known[f], at)
			}
			seen |= 1 << f
		case f == unknownKey:
			for _, name := range known {
				if strings.EqualFold(name, string(key)) { // Unicode folding, as encoding/json matched: "\u212aind" is "kind"
					return &fieldError{path: d.dec.StackPointer().Parent(), offset: at,
						msg: fmt.Sprintf("key %q at byte %d: keys are case-sensitive, the field is %q", key, at, name), key: true}
				}
			}
			if slices.Contains(others, string(key)) {
				return d.duplicate(string(key), at)
			}
			others = append(others, string(key))
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
}

// duplicate reports a key that appears twice in the object being read.
func (d *decoder) duplicate(key string, at int64) error {
	return &fieldError{path: d.dec.StackPointer().Parent(), offset: at, msg: fmt.Sprintf("duplicate key %q at byte %d", key, at), key: true}
}

// take moves the elements of a scratch stack above start into a new slice of their exact size.
func take[T any](stack *[]T, start int) []T {
	s := *stack
	out := make([]T, len(s)-start)
	copy(out, s[start:])
	clear(s[start:])
	*stack = s[:start]
	return out
}

// array reads an array (or null), calling elem for each element.
func (d *decoder) array(elem func() error) (null bool, err error) {
	switch d.dec.PeekKind() {
	case '[':
		if _, err := d.dec.ReadToken(); err != nil {
			return false, err
		}
	case 'n':
		_, err := d.dec.ReadValue()
		return true, err
	default:
		return false, d.wrongKind("an array")
	}
	for {
		switch d.dec.PeekKind() {
		case ']':
			_, err := d.dec.ReadToken()
			return false, err
		case 0:
			_, err := d.dec.ReadToken() // the syntax error
			return false, err
		}
		if err := elem(); err != nil {
			return false, err
		}
	}
}

// wrongKind consumes the next value and reports it is not what the field holds.
func (d *decoder) wrongKind(want string) error {
	k := d.dec.PeekKind()
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	return d.fail(raw, "want %s, found %s", want, kindName(k))
}

func unquote(raw jsontext.Value, buf *[]byte) []byte {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	b, err := jsontext.AppendUnquote((*buf)[:0], raw)
	if err != nil { // cannot happen: the decoder validated the string
		return s
	}
	*buf = b
	return b
}

// string reads a string (null leaves *dst as it is). Interned strings are shared within the event.
func (d *decoder) string(dst *string, interned bool) error {
	switch d.dec.PeekKind() {
	case '"':
	case 'n':
		_, err := d.dec.ReadValue()
		return err
	default:
		return d.wrongKind("a string")
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	s := unquote(raw, &d.str)
	if !interned {
		*dst = string(s)
		return nil
	}
	*dst = d.interned(s)
	return nil
}

// interned returns s as a string, shared within the event when it is short.
func (d *decoder) interned(s []byte) string {
	if len(s) > 64 {
		return string(s)
	}
	if v, ok := d.intern[string(s)]; ok {
		return v
	}
	v := string(s)
	d.intern[v] = v
	return v
}

// maxListKey bounds the arrays strings shares: their length-prefixed content, in bytes.
const maxListKey = 256

// strings reads an array of strings (null leaves *dst nil). Equal short arrays (an attribute's
// qualifier, repeated by every column of a table; a dataset's namespace) are one slice, shared
// within the event: the
// elements of a decoded []string must not be changed. Each has its exact capacity, so an append
// copies. The array is read into a key of its content first, so a repeated one allocates nothing.
func (d *decoder) strings(dst *[]string) error {
	key := d.listKey[:0]
	n := 0
	null, err := d.array(func() error {
		if d.dec.PeekKind() != '"' {
			return d.wrongKind("a string")
		}
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		s := unquote(raw, &d.str)
		key = binary.AppendUvarint(key, uint64(len(s)))
		key = append(key, s...)
		n++
		return nil
	})
	d.listKey = key
	if null || err != nil {
		return err
	}
	if v, ok := d.lists[string(key)]; ok {
		*dst = v
		return nil
	}
	v := make([]string, n)
	rest := key
	for i := range v {
		l, k := binary.Uvarint(rest)
		v[i] = d.interned(rest[k : k+int(l)])
		rest = rest[k+int(l):]
	}
	if len(key) <= maxListKey {
		if d.lists == nil {
			d.lists = make(map[string][]string, 16)
		}
		d.lists[string(key)] = v
	}
	*dst = v
	return nil
}

func (d *decoder) bool(dst *bool) error {
	switch d.dec.PeekKind() {
	case 't', 'f':
		raw, err := d.dec.ReadValue()
		*dst = err == nil && raw[0] == 't'
		return err
	case 'n':
		_, err := d.dec.ReadValue()
		return err
	}
	return d.wrongKind("a boolean")
}

// int64 reads an integer that fits in bits bits (null leaves *dst as it is).
func (d *decoder) int64(dst *int64, bits int) error {
	switch d.dec.PeekKind() {
	case '0':
	case 'n':
		_, err := d.dec.ReadValue()
		return err
	default:
		return d.wrongKind("an integer")
	}
	raw, err := d.dec.ReadValue()
	if err != nil {
		return err
	}
	b := []byte(raw)
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n uint64
	limit := uint64(1)<<(bits-1) - 1
	if neg {
		limit++
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return d.fail(raw, "want an integer, found %s", raw)
		}
		n = n*10 + uint64(c-'0')
		if n > limit {
			return d.fail(raw, "integer %s out of range", raw)
		}
	}
	if neg {
		*dst = -int64(n)
	} else {
		*dst = int64(n)
	}
	return nil
}

func (d *decoder) int(dst *int) error {
	n := int64(*dst)
	err := d.int64(&n, strconv.IntSize)
	*dst = int(n)
	return err
}

// intPtr reads an integer into a new *int (null leaves *dst nil).
func (d *decoder) intPtr(dst **int) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return err
	}
	var n int
	if err := d.int(&n); err != nil {
		return err
	}
	*dst = &n
	return nil
}

// any reads a value the way encoding/json decodes into any: numbers are float64.
func (d *decoder) any() (any, error) {
	switch k := d.dec.PeekKind(); k {
	case '{':
		m := map[string]any{}
		err := d.object(nil, func(key []byte) (int, error) {
			k := string(key)
			if _, dup := m[k]; dup {
				return dupKey, nil
			}
			v, err := d.any()
			m[k] = v
			return mapKey, err
		})
		return m, err
	case '[':
		s := []any{}
		_, err := d.array(func() error {
			v, err := d.any()
			s = append(s, v)
			return err
		})
		return s, err
	case '"':
		var s string
		err := d.string(&s, true)
		return s, err
	case '0':
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, d.fail(raw, "number %s out of range", raw)
		}
		return f, nil
	case 't', 'f':
		var b bool
		err := d.bool(&b)
		return b, err
	default: // null, or the syntax error
		_, err := d.dec.ReadValue()
		return nil, err
	}
}

var (
	envelopeKeys  = []string{"schemaVersion", "eventId", "emittedAt", "producer", "app", "query", "jvmId", "markers", "root", "nodes", "hive", "parent"}
	producerKeys  = []string{"name", "version", "spark", "scala", "hive"}
	appKeys       = []string{"id", "name", "user", "namespace"}
	queryKeys     = []string{"executionId", "funcName", "status", "error", "durationMs", "endedAt", "stream", "connect"}
	streamKeys    = []string{"id", "runId", "name", "batchId"}
	connectKeys   = []string{"userId", "userName", "sessionId", "operationId", "clientType"}
	parentKeys    = []string{"namespace", "name", "runId", "root"}
	markersKeys   = []string{"nestedWrite", "truncated", "analyzed"}
	nodeKeys      = []string{"id", "class", "children", "output", "exprs", "plans", "args", "dataset", "write", "ddl"}
	attributeKeys = []string{"exprId", "name", "type", "nullable", "qualifier", "metadataCol"}
	exprKeys      = []string{"class", "exprId", "name", "type", "sql", "plan", "children", "fields", "commonId"}
	datasetKeys   = []string{"kind", "catalog", "namespace", "name", "provider", "location", "tableType", "format", "paths",
		"url", "table", "query", "servers", "topics", "pattern", "temporary", "description", "cluster", "columnComments", "tagProperties", "inferred"}
	writeKeys      = []string{"dataset", "mode", "columns", "partitionColumns", "query", "columnTypes"}
	ddlKeys        = []string{"action", "dataset", "to", "source", "overwrite", "columns", "dropped"}
	columnKeys     = []string{"name", "type"}
	hiveKeys       = []string{"queryId", "operation", "engine", "database", "hash", "queryText", "inputs", "outputs", "edges", "vertices"}
	hiveEdgeKeys   = []string{"sources", "targets", "expression", "edgeType"}
	hiveVertexKeys = []string{"id", "vertexType", "vertexId"}
)

// envelope decodes the event into env. It returns the schema version when it was read (and is
// supported: an unsupported one is the error).
func (d *decoder) envelope(env *Envelope) (version *string, err error) {
	if d.dec.PeekKind() != '{' {
		if d.dec.PeekKind() == 0 {
			_, err := d.dec.ReadToken()
			return nil, err
		}
		return nil, d.wrongKind("an object")
	}
	err = d.object(envelopeKeys, func(key []byte) (int, error) {
		d.planLast = false
		switch string(key) {
		case "schemaVersion":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 0, err
			}
			if err := d.string(&env.SchemaVersion, false); err != nil {
				return 0, err
			}
			version = &env.SchemaVersion
			return 0, checkVersion(env.SchemaVersion)
		case "eventId":
			return 1, d.string(&env.EventID, false)
		case "emittedAt":
			return 2, d.string(&env.EmittedAt, false)
		case "producer":
			p := &env.Producer
			return 3, d.object(producerKeys, func(key []byte) (int, error) {
				switch string(key) {
				case "name":
					return 0, d.string(&p.Name, true)
				case "version":
					return 1, d.string(&p.Version, true)
				case "spark":
					return 2, d.string(&p.Spark, true)
				case "scala":
					return 3, d.string(&p.Scala, true)
				case "hive":
					return 4, d.string(&p.Hive, true)
				}
				return unknownKey, nil
			})
		case "app":
			a := &env.App
			return 4, d.object(appKeys, func(key []byte) (int, error) {
				switch string(key) {
				case "id":
					return 0, d.string(&a.ID, false)
				case "name":
					return 1, d.string(&a.Name, false)
				case "user":
					return 2, d.string(&a.User, false)
				case "namespace":
					return 3, d.string(&a.Namespace, false)
				}
				return unknownKey, nil
			})
		case "query":
			q := &env.Query
			return 5, d.object(queryKeys, func(key []byte) (int, error) {
				switch string(key) {
				case "executionId":
					return 0, d.int64(&q.ExecutionID, 64)
				case "funcName":
					return 1, d.string(&q.FuncName, true)
				case "status":
					return 2, d.string(&q.Status, true)
				case "error":
					return 3, d.string(&q.Error, false)
				case "durationMs":
					return 4, d.int64(&q.DurationMs, 64)
				case "endedAt":
					return 5, d.string(&q.EndedAt, false)
				case "stream":
					return 6, d.stream(&q.Stream)
				case "connect":
					return 7, d.connect(&q.Connect)
				}
				return unknownKey, nil
			})
		case "jvmId":
			return 6, d.string(&env.JVMID, false)
		case "markers":
			m := &env.Markers
			return 7, d.object(markersKeys, func(key []byte) (int, error) {
				switch string(key) {
				case "nestedWrite":
					return 0, d.bool(&m.NestedWrite)
				case "truncated":
					return 1, d.bool(&m.Truncated)
				case "analyzed":
					return 2, d.bool(&m.Analyzed)
				}
				return unknownKey, nil
			})
		case "root":
			return 8, d.int(&env.Root)
		case "nodes":
			if d.planAt < 0 {
				d.planAt = d.dec.InputOffset()
			}
			if d.head {
				return 9, errHead
			}
			d.planLast = true
			null, err := d.array(func() error {
				env.Nodes = append(env.Nodes, Node{})
				return d.node(&env.Nodes[len(env.Nodes)-1])
			})
			if !null && env.Nodes == nil {
				env.Nodes = []Node{}
			}
			return 9, err
		case "hive":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 10, err
			}
			env.Hive = new(Hive)
			return 10, d.hive(env.Hive)
		case "parent":
			return 11, d.parent(&env.Parent)
		}
		return unknownKey, nil
	})
	if err == nil {
		// Nothing but white space may follow the event.
		end := int(d.dec.InputOffset())
		rest := bytes.TrimLeft(d.data[end:], " \t\r\n")
		if len(rest) > 0 {
			at := len(d.data) - len(rest)
			err = fmt.Errorf("%w at byte %d of %d: %q after the event", ErrInvalidJSON, at, len(d.data), rest[:min(len(rest), 8)])
		}
	}
	return version, err
}

// connect decodes query.connect (null: none).
func (d *decoder) connect(dst **Connect) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return err
	}
	c := new(Connect)
	*dst = c
	return d.object(connectKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "userId":
			return 0, d.string(&c.UserID, false)
		case "userName":
			return 1, d.string(&c.UserName, false)
		case "sessionId":
			return 2, d.string(&c.SessionID, false)
		case "operationId":
			return 3, d.string(&c.OperationID, false)
		case "clientType":
			return 4, d.string(&c.ClientType, true)
		}
		return unknownKey, nil
	})
}

// parent decodes a parent run and its root (null: none).
func (d *decoder) parent(dst **Parent) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return err
	}
	p := new(Parent)
	*dst = p
	return d.object(parentKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "namespace":
			return 0, d.string(&p.Namespace, false)
		case "name":
			return 1, d.string(&p.Name, false)
		case "runId":
			return 2, d.string(&p.RunID, false)
		case "root":
			return 3, d.parent(&p.Root)
		}
		return unknownKey, nil
	})
}

func (d *decoder) node(n *Node) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(nodeKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "id":
			return 0, d.int(&n.ID)
		case "class":
			return 1, d.string(&n.Class, true)
		case "children":
			return 2, d.ints(&n.Children)
		case "output":
			start := len(d.attrs)
			null, err := d.array(func() error {
				var a Attribute
				err := d.attribute(&a)
				d.attrs = append(d.attrs, a)
				return err
			})
			if !null {
				n.Output = take(&d.attrs, start)
			}
			return 3, err
		case "exprs":
			if d.dec.PeekKind() == '{' && n.Exprs == nil {
				n.Exprs = map[string][]Expr{} // as encoding/json: {} is an empty map, null a nil one
			}
			return 4, d.object(nil, func(key []byte) (int, error) {
				role := d.internKey(key)
				if _, dup := n.Exprs[role]; dup {
					return dupKey, nil
				}
				list, err := d.exprList()
				n.Exprs[role] = list
				return mapKey, err
			})
		case "plans":
			if d.dec.PeekKind() == '{' && n.Plans == nil {
				n.Plans = map[string]int{}
			}
			return 5, d.object(nil, func(key []byte) (int, error) {
				role := d.internKey(key)
				if _, dup := n.Plans[role]; dup {
					return dupKey, nil
				}
				var p int
				if d.dec.PeekKind() != '0' && d.dec.PeekKind() != 'n' {
					return mapKey, d.wrongKind("an integer")
				}
				err := d.int(&p)
				n.Plans[role] = p
				return mapKey, err
			})
		case "args":
			if d.dec.PeekKind() == '{' && n.Args == nil {
				n.Args = map[string]any{}
			}
			return 6, d.object(nil, func(key []byte) (int, error) {
				name := d.internKey(key)
				if _, dup := n.Args[name]; dup {
					return dupKey, nil
				}
				v, err := d.any()
				n.Args[name] = v
				return mapKey, err
			})
		case "dataset":
			return 7, d.datasetPtr(&n.Dataset)
		case "write":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 8, err
			}
			n.Write = new(Write)
			return 8, d.write(n.Write)
		case "ddl":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 9, err
			}
			n.DDL = new(DDL)
			return 9, d.ddl(n.DDL)
		}
		return unknownKey, nil
	})
}

// internKey copies an object key (a role or an argument name) into *dst, shared within the event.
func (d *decoder) internKey(key []byte) string {
	if v, ok := d.intern[string(key)]; ok {
		return v
	}
	v := string(key)
	d.intern[v] = v
	return v
}

// exprList reads an array of expressions (null is nil).
func (d *decoder) exprList() ([]Expr, error) {
	start := len(d.exprs)
	null, err := d.array(func() error {
		var x Expr
		err := d.expr(&x)
		d.exprs = append(d.exprs, x)
		return err
	})
	if null || err != nil {
		return nil, err
	}
	return take(&d.exprs, start), nil
}

func (d *decoder) attribute(a *Attribute) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(attributeKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "exprId":
			return 0, d.int64(&a.ExprID, 64)
		case "name":
			return 1, d.string(&a.Name, true)
		case "type":
			return 2, d.string(&a.Type, true)
		case "nullable":
			return 3, d.bool(&a.Nullable)
		case "qualifier":
			return 4, d.strings(&a.Qualifier)
		case "metadataCol":
			return 5, d.bool(&a.MetadataCol)
		}
		return unknownKey, nil
	})
}

func (d *decoder) expr(x *Expr) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(exprKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "class":
			return 0, d.string(&x.Class, true)
		case "exprId":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 1, err
			}
			var id int64
			if err := d.int64(&id, 64); err != nil {
				return 1, err
			}
			x.ExprID = &id
			return 1, nil
		case "name":
			return 2, d.string(&x.Name, true)
		case "type":
			return 3, d.string(&x.Type, true)
		case "sql":
			return 4, d.string(&x.SQL, false)
		case "plan":
			return 5, d.intPtr(&x.Plan)
		case "children":
			var err error
			x.Children, err = d.exprList()
			return 6, err
		case "fields":
			return 7, d.strings(&x.Fields)
		case "commonId":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 8, err
			}
			var id int64
			if err := d.int64(&id, 64); err != nil {
				return 8, err
			}
			x.CommonID = &id
			return 8, nil
		}
		return unknownKey, nil
	})
}

func (d *decoder) stream(dst **Stream) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return err
	}
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	st := new(Stream)
	*dst = st
	return d.object(streamKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "id":
			return 0, d.string(&st.ID, false)
		case "runId":
			return 1, d.string(&st.RunID, false)
		case "name":
			return 2, d.string(&st.Name, false)
		case "batchId":
			if d.dec.PeekKind() == 'n' {
				_, err := d.dec.ReadValue()
				return 3, err
			}
			var b int64
			if err := d.int64(&b, 64); err != nil {
				return 3, err
			}
			st.BatchID = &b
			return 3, nil
		}
		return unknownKey, nil
	})
}

func (d *decoder) datasetPtr(dst **Dataset) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return err
	}
	*dst = new(Dataset)
	return d.dataset(*dst)
}

func (d *decoder) dataset(ds *Dataset) error {
	if d.dec.PeekKind() != '{' && d.dec.PeekKind() != 'n' {
		return d.wrongKind("an object")
	}
	return d.object(datasetKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "kind":
			return 0, d.string(&ds.Kind, true)
		case "catalog":
			return 1, d.string(&ds.Catalog, true)
		case "namespace":
			return 2, d.strings(&ds.Namespace)
		case "name":
			return 3, d.string(&ds.Name, true)
		case "provider":
			return 4, d.string(&ds.Provider, true)
		case "location":
			return 5, d.string(&ds.Location, true)
		case "tableType":
			return 6, d.string(&ds.TableType, true)
		case "format":
			return 7, d.string(&ds.Format, true)
		case "paths":
			return 8, d.strings(&ds.Paths)
		case "url":
			return 9, d.string(&ds.URL, true)
		case "table":
			return 10, d.string(&ds.Table, true)
		case "query":
			return 11, d.string(&ds.SQL, false)
		case "servers":
			return 12, d.string(&ds.Servers, true)
		case "topics":
			return 13, d.strings(&ds.Topics)
		case "pattern":
			return 14, d.string(&ds.Pattern, true)
		case "temporary":
			return 15, d.bool(&ds.Temporary)
		case "description":
			return 16, d.string(&ds.Description, false)
		case "cluster":
			return 17, d.string(&ds.Cluster, false)
		case "columnComments":
			return 18, d.stringMap(&ds.ColumnComments)
		case "tagProperties":
			return 19, d.stringMap(&ds.TagProperties)
		case "inferred":
			return 20, d.bool(&ds.Inferred)
		}
		return unknownKey, nil
	})
}

// stringMap reads an object of strings (since 1.5: a table's column comments and tag
// properties); an object, even empty, makes *dst non-nil, null leaves it nil.
func (d *decoder) stringMap(dst *map[string]string) error {
	if d.dec.PeekKind() == '{' && *dst == nil {
		*dst = map[string]string{}
	}
	return d.object(nil, func(key []byte) (int, error) {
		k := string(key)
		if _, dup := (*dst)[k]; dup {
			return dupKey, nil
		}
		var v string
		err := d.string(&v, false)
		(*dst)[k] = v
		return mapKey, err
	})
}

func (d *decoder) write(w *Write) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(writeKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "dataset":
			return 0, d.dataset(&w.Dataset)
		case "mode":
			return 1, d.string(&w.Mode, true)
		case "columns":
			return 2, d.strings(&w.Columns)
		case "partitionColumns":
			return 3, d.strings(&w.PartitionColumns)
		case "query":
			return 4, d.intPtr(&w.Query)
		case "columnTypes":
			return 5, d.strings(&w.ColumnTypes)
		}
		return unknownKey, nil
	})
}

func (d *decoder) ddl(x *DDL) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(ddlKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "action":
			return 0, d.string(&x.Action, true)
		case "dataset":
			return 1, d.dataset(&x.Dataset)
		case "to":
			return 2, d.datasetPtr(&x.To)
		case "source":
			return 3, d.datasetPtr(&x.Source)
		case "overwrite":
			return 4, d.bool(&x.Overwrite)
		case "columns":
			null, err := d.array(func() error {
				var c ColumnSchema
				if d.dec.PeekKind() != '{' {
					return d.wrongKind("an object")
				}
				err := d.object(columnKeys, func(key []byte) (int, error) {
					switch string(key) {
					case "name":
						return 0, d.string(&c.Name, false)
					case "type":
						return 1, d.string(&c.Type, true)
					}
					return unknownKey, nil
				})
				x.Columns = append(x.Columns, c)
				return err
			})
			if !null && x.Columns == nil {
				x.Columns = []ColumnSchema{}
			}
			return 5, err
		case "dropped":
			return 6, d.strings(&x.Dropped)
		}
		return unknownKey, nil
	})
}

func (d *decoder) hive(h *Hive) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(hiveKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "queryId":
			return 0, d.string(&h.QueryID, false)
		case "operation":
			return 1, d.string(&h.Operation, true)
		case "engine":
			return 2, d.string(&h.Engine, true)
		case "database":
			return 3, d.string(&h.Database, true)
		case "hash":
			return 4, d.string(&h.Hash, false)
		case "queryText":
			return 5, d.string(&h.QueryText, false)
		case "inputs":
			null, err := d.array(func() error {
				h.Inputs = append(h.Inputs, Dataset{})
				if d.dec.PeekKind() != '{' {
					return d.wrongKind("an object")
				}
				return d.dataset(&h.Inputs[len(h.Inputs)-1])
			})
			if !null && h.Inputs == nil {
				h.Inputs = []Dataset{}
			}
			return 6, err
		case "outputs":
			null, err := d.array(func() error {
				h.Outputs = append(h.Outputs, Write{})
				return d.write(&h.Outputs[len(h.Outputs)-1])
			})
			if !null && h.Outputs == nil {
				h.Outputs = []Write{}
			}
			return 7, err
		case "edges":
			null, err := d.array(func() error {
				h.Edges = append(h.Edges, HiveEdge{})
				return d.hiveEdge(&h.Edges[len(h.Edges)-1])
			})
			if !null && h.Edges == nil {
				h.Edges = []HiveEdge{}
			}
			return 8, err
		case "vertices":
			null, err := d.array(func() error {
				h.Vertices = append(h.Vertices, HiveVertex{})
				return d.hiveVertex(&h.Vertices[len(h.Vertices)-1])
			})
			if !null && h.Vertices == nil {
				h.Vertices = []HiveVertex{}
			}
			return 9, err
		}
		return unknownKey, nil
	})
}

func (d *decoder) hiveEdge(e *HiveEdge) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(hiveEdgeKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "sources":
			return 0, d.ints(&e.Sources)
		case "targets":
			return 1, d.ints(&e.Targets)
		case "expression":
			return 2, d.string(&e.Expression, false)
		case "edgeType":
			return 3, d.string(&e.EdgeType, true)
		}
		return unknownKey, nil
	})
}

func (d *decoder) hiveVertex(v *HiveVertex) error {
	if d.dec.PeekKind() != '{' {
		return d.wrongKind("an object")
	}
	return d.object(hiveVertexKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "id":
			return 0, d.int(&v.ID)
		case "vertexType":
			return 1, d.string(&v.VertexType, true)
		case "vertexId":
			return 2, d.string(&v.VertexID, true)
		}
		return unknownKey, nil
	})
}

// ints reads an array of integers (null leaves *dst nil).
func (d *decoder) ints(dst *[]int) error {
	start := len(d.intStack)
	null, err := d.array(func() error {
		var c int
		if d.dec.PeekKind() != '0' {
			return d.wrongKind("an integer")
		}
		err := d.int(&c)
		d.intStack = append(d.intStack, c)
		return err
	})
	if !null {
		*dst = take(&d.intStack, start)
	}
	return err
}
