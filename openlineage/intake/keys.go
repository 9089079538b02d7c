package intake

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/colline/colline/record"
)

// Key is one producer's API key and what it may write: the jobs of its events and the datasets
// they write or change (by DDL, such as lifecycleStateChange DROP), each matched against
// patterns. What it reads is not restricted: lineage crosses teams through the datasets one
// writes and another reads.
type Key struct {
	Name     string   // names the key in logs and in colline_openlineage_http_forbidden_total
	Jobs     []string // patterns of the job keys it may write: "<job namespace>/<job name>"
	Datasets []string // patterns of the dataset keys it may write: the graph's, "<namespace>/<name>" after COLLINE_OPENLINEAGE_ALIASES
	hash     [sha256.Size]byte
}

// Keys are the API keys an endpoint takes; a request must carry one (Authorization: Bearer).
type Keys []Key

// AnyKey is a key allowed to write anything (COLLINE_OPENLINEAGE_HTTP_API_KEY).
func AnyKey(name, secret string) Key {
	return Key{Name: name, Jobs: []string{"*"}, Datasets: []string{"*"}, hash: sha256.Sum256([]byte(secret))}
}

// minKeyLength is the shortest key a keys file may hold in clear.
const minKeyLength = 16

var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// LoadKeys reads a keys file (COLLINE_OPENLINEAGE_HTTP_KEYS_FILE, docs/security.md): one producer
// per line, its name, its key and what it may write, separated by blanks; # starts a comment.
//
//	# name   key                                         may write
//	team-a   sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8  job=team-a/*  dataset=s3://lake/team-a/*
//	airflow  4f9c2e0d6b1a47f5a8d3c2b1e0f9a8b7              job=airflow/*  dataset=*
//
// A key is the bearer token itself (16 characters at least), or "sha256:" and the hex SHA-256 of
// it, so that the file need not hold the secret. job= and dataset= patterns may repeat; in a
// pattern, * matches any run of characters (slashes included) and nothing else is special. Each
// line needs at least one of each (job=* and dataset=* allow anything).
func LoadKeys(file string) (Keys, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ks, err := ParseKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return ks, nil
}

// ParseKeys reads the keys file format of LoadKeys. Errors name the line, never a key.
func ParseKeys(r io.Reader) (Keys, error) {
	var ks Keys
	names, hashes := map[string]int{}, map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("line %d: want a name, a key, and job= and dataset= patterns", n)
		}
		k := Key{Name: f[0]}
		if !keyName.MatchString(k.Name) {
			return nil, fmt.Errorf("line %d: name %q: use 1 to 64 of A-Z a-z 0-9 . _ -", n, k.Name)
		}
		if at, dup := names[k.Name]; dup {
			return nil, fmt.Errorf("line %d: name %q is already the name of line %d", n, k.Name, at)
		}
		if h, ok := strings.CutPrefix(f[1], "sha256:"); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("line %d: %s: sha256: must be followed by 64 hex digits (sha256sum of the key)", n, k.Name)
			}
			copy(k.hash[:], b)
		} else {
			if len(f[1]) < minKeyLength {
				return nil, fmt.Errorf("line %d: %s: the key has %d characters; use at least %d (e.g. openssl rand -hex 32)", n, k.Name, len(f[1]), minKeyLength)
			}
			k.hash = sha256.Sum256([]byte(f[1]))
		}
		if at, dup := hashes[k.hash]; dup {
			return nil, fmt.Errorf("line %d: %s: the same key as line %d", n, k.Name, at)
		}
		for _, p := range f[2:] {
			switch kind, pat, _ := strings.Cut(p, "="); {
			case pat == "":
				return nil, fmt.Errorf("line %d: %s: %q: want job=PATTERN or dataset=PATTERN", n, k.Name, p)
			case kind == "job":
				k.Jobs = append(k.Jobs, pat)
			case kind == "dataset":
				k.Datasets = append(k.Datasets, pat)
			default:
				return nil, fmt.Errorf("line %d: %s: %q: want job=PATTERN or dataset=PATTERN", n, k.Name, p)
			}
		}
		if len(k.Jobs) == 0 || len(k.Datasets) == 0 {
			return nil, fmt.Errorf("line %d: %s: needs at least one job= and one dataset= pattern (job=* and dataset=* allow any)", n, k.Name)
		}
		names[k.Name], hashes[k.hash] = n, n
		ks = append(ks, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("no key: an empty keys file would refuse every producer")
	}
	return ks, nil
}

// find returns the key token is, or nil. It compares token's hash with every key's in constant
// time, and goes through all of them whichever matches.
func (ks Keys) find(token string) *Key {
	h := sha256.Sum256([]byte(token))
	var found *Key
	for i := range ks {
		if subtle.ConstantTimeCompare(h[:], ks[i].hash[:]) == 1 {
			found = &ks[i]
		}
	}
	return found
}

// Refusal says what a key may not write: the kind ("job" or "dataset", the label of
// colline_openlineage_http_forbidden_total) and the key of the job or dataset.
type Refusal struct {
	What, Subject string
}

// allows returns nil when the key may write everything it, an event's item, writes: its job (for a
// DatasetEvent, the dataset's namespace and name, as the graph names its job), each dataset it
// writes, and each dataset it changes (drops, renames to, truncates).
func (k *Key) allows(it record.Item) *Refusal {
	if job, _, _ := it.Job(); !anyMatch(k.Jobs, job) {
		return &Refusal{"job", job}
	}
	if it.Lineage == nil {
		return nil
	}
	for _, w := range it.Lineage.Writes {
		if !anyMatch(k.Datasets, w.Key) {
			return &Refusal{"dataset", w.Key}
		}
	}
	for _, c := range it.Lineage.Changes {
		if !anyMatch(k.Datasets, c.Dataset.Key) {
			return &Refusal{"dataset", c.Dataset.Key}
		}
		if c.To != nil && !anyMatch(k.Datasets, c.To.Key) {
			return &Refusal{"dataset", c.To.Key}
		}
	}
	return nil
}

func anyMatch(patterns []string, s string) bool {
	for _, p := range patterns {
		if match(p, s) {
			return true
		}
	}
	return false
}

// match reports whether s matches pattern, where * matches any run of characters and every other
// character itself.
func match(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last) && len(s) >= len(last)
}
