package ingest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/kafkaconn"
)

// Backlog reads, from Kafka, how far a group must consume its topics to have caught up with what
// they hold now. It is the backlog of Params.ExitWhenIdle, and the lag of Monitor.
type Backlog struct {
	Brokers  []string
	Topics   []string // the topics the group reads (the plan topic, and the OpenLineage topic when enabled)
	Group    string
	Security kafkaconn.Security
}

// Partition is one partition of one topic.
type Partition struct {
	Topic string
	ID    int
}

func (p Partition) String() string { return p.Topic + "/" + strconv.Itoa(p.ID) }

// position is where a partition starts and ends, and where the group is.
type position struct {
	first, end, committed int64 // committed is -1 when the group has no offset
}

// next is the offset the group reads next: its committed offset, or the first offset when it has
// none or its offset was deleted (the reader starts at the first offset then).
func (x position) next() int64 { return max(x.committed, x.first) }

// Targets returns, for each partition that has messages beyond where the group reads next, the
// partition's end offset.
func (b Backlog) Targets(ctx context.Context) (map[Partition]int64, error) {
	pos, err := b.positions(ctx)
	if err != nil {
		return nil, err
	}
	targets := map[Partition]int64{}
	for p, x := range pos {
		if x.next() < x.end {
			targets[p] = x.end
		}
	}
	return targets, nil
}

// Lag returns, for every partition of the topics, the records the group has not committed yet:
// the end offset minus where the group reads next.
func (b Backlog) Lag(ctx context.Context) (map[Partition]int64, error) {
	pos, err := b.positions(ctx)
	if err != nil {
		return nil, err
	}
	lag := make(map[Partition]int64, len(pos))
	for p, x := range pos {
		lag[p] = max(x.end-x.next(), 0)
	}
	return lag, nil
}

func (b Backlog) positions(ctx context.Context) (map[Partition]position, error) {
	c, done := b.Security.Client(b.Brokers, 10*time.Second)
	defer done()
	out := map[Partition]position{}
	for _, topic := range b.Topics {
		pos, err := b.topic(ctx, c, topic)
		if err != nil {
			return nil, err
		}
		for p, x := range pos {
			out[Partition{Topic: topic, ID: p}] = x
		}
	}
	return out, nil
}

// topic returns the positions of one topic's partitions.
func (b Backlog) topic(ctx context.Context, c *kafka.Client, topic string) (map[int]position, error) {
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return nil, fmt.Errorf("metadata of %s: %v", topic, topicError(meta))
	}
	if len(meta.Topics[0].Partitions) == 0 {
		return nil, fmt.Errorf("metadata of %s: no partitions", topic)
	}
	var parts []int
	for _, p := range meta.Topics[0].Partitions {
		if p.Error != nil {
			return nil, fmt.Errorf("metadata of %s/%d: %w", topic, p.ID, p.Error)
		}
		parts = append(parts, p.ID)
	}
	// One kind of offset per request: kafka-go files an answer under LastOffset whenever the broker
	// echoes timestamp -1, which it does for first offsets too; asked for both in one request, the
	// first offset reads 0 (and the end may be overwritten by the start) once the log start has
	// moved (DeleteRecords, retention).
	first, err := offsets(ctx, c, topic, parts, kafka.FirstOffsetOf)
	if err != nil {
		return nil, err
	}
	end, err := offsets(ctx, c, topic, parts, kafka.LastOffsetOf)
	if err != nil {
		return nil, err
	}
	committed, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: b.Group, Topics: map[string][]int{topic: parts}})
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
	for _, p := range committed.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("offset of group %s on %s/%d: %w", b.Group, topic, p.Partition, p.Error)
		}
		if x, ok := pos[p.Partition]; ok {
			x.committed = p.CommittedOffset // -1 when none
			pos[p.Partition] = x
		}
	}
	return pos, nil
}

// offsets lists one kind of offset (kafka.FirstOffsetOf or kafka.LastOffsetOf) of parts.
func offsets(ctx context.Context, c *kafka.Client, topic string, parts []int, kind func(int) kafka.OffsetRequest) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kind(p)
	}
	res, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets of %s: %w", topic, err)
	}
	out := make(map[int]int64, len(parts))
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("offsets of %s/%d: %w", topic, p.Partition, p.Error)
		}
		// With one kind asked, the answer is the larger of the two fields: the other holds kafka-go's
		// placeholder (-1 or 0), see above.
		out[p.Partition] = max(p.FirstOffset, p.LastOffset)
	}
	for _, p := range parts {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("offsets of %s: no answer for partition %d", topic, p)
		}
	}
	return out, nil
}
