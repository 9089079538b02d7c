package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
)

// variant returns a copy of a captured event that is a different run writing different tables:
// a fresh event id, and every tpcds_out (the CTAS target database) renamed to tpcds_out_<copy>, so
// the copy's target columns and FEEDS edges are new to the graph while its sources (the tpcds
// tables) are shared, as in an estate where many jobs read the same tables.
func variant(data []byte, copy int) (out []byte, id string) {
	id = newID()
	out = data
	if copy > 0 {
		out = bytes.ReplaceAll(out, []byte("tpcds_out"), []byte(fmt.Sprintf("tpcds_out_%d", copy)))
	} else {
		out = bytes.Clone(out)
	}
	key := []byte(`"eventId":"`)
	i := bytes.Index(out, key)
	if i < 0 {
		return out, "" // not an event the listener wrote; let the consumer say so
	}
	start := i + len(key)
	end := bytes.IndexByte(out[start:], '"')
	return append(append(append([]byte{}, out[:start]...), id...), out[start+end:]...), id
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
