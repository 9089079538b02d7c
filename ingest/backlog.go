package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// Backlog reads, from Kafka, how far a group must consume a topic to have caught up with what the
// topic holds now. It is the backlog of Params.ExitWhenIdle, and the lag of Monitor.
type Backlog struct {
	Brokers  []string
	Topic    string
	Group    string
	Security Security
}

// position is where a partition starts and ends, and where the group is.
type position struct {
	first, end, committed int64 // committed is -1 when the group has no offset
}

// next is the offset the group reads next: its committed offset, or the first offset when it has
// none or its offset was deleted (the reader starts at the first offset then).
func (x position) next() int64 { return max(x.committed, x.first) }

// Targets returns, for each partition that has messages beyond where the group reads next, the
// partition's end offset.
func (b Backlog) Targets(ctx context.Context) (map[int]int64, error) {
	pos, err := b.positions(ctx)
	if err != nil {
		return nil, err
	}
	targets := map[int]int64{}
	for p, x := range pos {
		if x.next() < x.end {
			targets[p] = x.end
		}
	}
	return targets, nil
}

// Lag returns, for every partition of the topic, the records the group has not committed yet:
// the end offset minus where the group reads next.
func (b Backlog) Lag(ctx context.Context) (map[int]int64, error) {
	pos, err := b.positions(ctx)
	if err != nil {
		return nil, err
	}
	lag := make(map[int]int64, len(pos))
	for p, x := range pos {
		lag[p] = max(x.end-x.next(), 0)
	}
	return lag, nil
}

func (b Backlog) positions(ctx context.Context) (map[int]position, error) {
	c, done := client(b.Brokers, b.Security, 10*time.Second)
	defer done()
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{b.Topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", b.Topic, err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return nil, fmt.Errorf("metadata of %s: %v", b.Topic, topicError(meta))
	}
	if len(meta.Topics[0].Partitions) == 0 {
		return nil, fmt.Errorf("metadata of %s: no partitions", b.Topic)
	}
	var parts []int
	for _, p := range meta.Topics[0].Partitions {
		if p.Error != nil {
			return nil, fmt.Errorf("metadata of %s/%d: %w", b.Topic, p.ID, p.Error)
		}
		parts = append(parts, p.ID)
	}
	// One kind of offset per request: kafka-go files an answer under LastOffset whenever the broker
	// echoes timestamp -1, which it does for first offsets too; asked for both in one request, the
	// first offset reads 0 (and the end may be overwritten by the start) once the log start has
	// moved (DeleteRecords, retention).
	first, err := b.offsets(ctx, c, parts, kafka.FirstOffsetOf)
	if err != nil {
		return nil, err
	}
	end, err := b.offsets(ctx, c, parts, kafka.LastOffsetOf)
	if err != nil {
		return nil, err
	}
	committed, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: b.Group, Topics: map[string][]int{b.Topic: parts}})
	if err != nil {
		return nil, fmt.Errorf("offsets of group %s: %w", b.Group, err)
	}
	if committed.Error != nil {
		return nil, fmt.Errorf("offsets of group %s: %w", b.Group, committed.Error)
	}
	pos := make(map[int]position, len(parts))
	for _, p := range parts {
		pos[p] = position{first: max(first[p], 0), end: max(end[p], 0), committed: -1}
	}
	for _, p := range committed.Topics[b.Topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("offset of group %s on %s/%d: %w", b.Group, b.Topic, p.Partition, p.Error)
		}
		if x, ok := pos[p.Partition]; ok {
			x.committed = p.CommittedOffset // -1 when none
			pos[p.Partition] = x
		}
	}
	return pos, nil
}

// offsets lists one kind of offset (kafka.FirstOffsetOf or kafka.LastOffsetOf) of parts.
func (b Backlog) offsets(ctx context.Context, c *kafka.Client, parts []int, kind func(int) kafka.OffsetRequest) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kind(p)
	}
	res, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{b.Topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets of %s: %w", b.Topic, err)
	}
	out := make(map[int]int64, len(parts))
	for _, p := range res.Topics[b.Topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("offsets of %s/%d: %w", b.Topic, p.Partition, p.Error)
		}
		// With one kind asked, the answer is the larger of the two fields: the other holds kafka-go's
		// placeholder (-1 or 0), see above.
		out[p.Partition] = max(p.FirstOffset, p.LastOffset)
	}
	for _, p := range parts {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("offsets of %s: no answer for partition %d", b.Topic, p)
		}
	}
	return out, nil
}
