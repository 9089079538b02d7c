package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/config"
	"github.com/colline/colline/graph"
	"github.com/colline/colline/kafkaconn"
	"github.com/colline/colline/process"
	"github.com/colline/colline/record"
)

// upgrade moves a graph to graph.ModelVersion: lineage is re-derivable from the raw plans, so it
// removes what the older model stored differently (graph.Writer.Upgrade), re-reads the topic from
// its first offset to the end it has when the upgrade starts, writes every event again through
// the current extractor and writer (idempotent), and stamps the graph. Messages the consumer
// cannot read are skipped and counted (the consumer sent them to the dead-letter topic).
func upgrade(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("colline upgrade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	brokers := fs.String("brokers", envOr("COLLINE_KAFKA_BROKERS", "127.0.0.1:19092"), "Kafka bootstrap servers, comma-separated (env COLLINE_KAFKA_BROKERS)")
	topic := fs.String("topic", envOr("COLLINE_KAFKA_TOPIC", "colline.plans"), "topic of plan events (env COLLINE_KAFKA_TOPIC)")
	db := neo4jFlags(fs)
	batch := fs.Int("batch", 100, "events per write transaction")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(fmt.Sprintf("upgrade takes no files (got %q): it reads the topic", rest[0]))
	}
	if *batch < 1 {
		return usageError(fmt.Sprintf("--batch %d: must be at least 1", *batch))
	}
	c, err := config.Load[config.Config]()
	if err != nil {
		return err
	}
	sec, err := c.KafkaSecurity() // as the consumers reach a secured cluster
	if err != nil {
		return err
	}
	w, closeDriver, err := db.writer()
	if err != nil {
		return err
	}
	defer closeDriver(context.WithoutCancel(ctx))
	return Upgrade(ctx, w, strings.Split(*brokers, ","), *topic, *batch, stdout, sec)
}

// Upgrade runs the upgrade of w from topic (see upgrade), reporting progress to out. sec, at most
// one, secures the Kafka connections (Default: PLAINTEXT).
func Upgrade(ctx context.Context, w *graph.Writer, brokers []string, topic string, batch int, out io.Writer, sec ...kafkaconn.Security) error {
	var security kafkaconn.Security
	if len(sec) > 0 {
		security = sec[0]
	}
	start := time.Now()
	// Kafka first: a wrong address, certificate or password must change nothing in the graph
	ends, err := endOffsets(ctx, brokers, topic, security)
	if err != nil {
		return fmt.Errorf("upgrade: %w (is Kafka at %s, and is the topic right?)", err, strings.Join(brokers, ","))
	}
	deleted, err := w.Upgrade(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "upgrade: removed %d model-1 FEEDS relationships; re-reading %s from the start\n", deleted, topic)
	parts := make([]int, 0, len(ends))
	var total int64
	for p, end := range ends {
		if end > 0 {
			parts = append(parts, p)
			total += end
		}
	}
	slices.Sort(parts)
	var read, written, skipped int64
	var items []record.Item
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		if err := w.Write(ctx, items); err != nil {
			return fmt.Errorf("upgrade: write after %d events: %w", written, err)
		}
		written += int64(len(items))
		items = items[:0]
		return nil
	}
	var step process.Step // the consumer's limits and checks
	last := time.Now()
	for _, p := range parts {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxBytes: 64 << 20, MaxWait: 250 * time.Millisecond, Dialer: security.Dialer()})
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			r.Close()
			return err
		}
		for {
			msg, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				return fmt.Errorf("upgrade: read %s/%d: %w", topic, p, err)
			}
			read++
			it, err := step.Item(msg.Value)
			switch {
			case err != nil:
				skipped++
			case it.Lineage != nil:
				items = append(items, it)
			}
			if len(items) >= batch {
				if err := flush(); err != nil {
					r.Close()
					return err
				}
			}
			if time.Since(last) > 2*time.Second {
				fmt.Fprintf(out, "upgrade: %d of about %d messages read, %d events written\n", read, total, written)
				last = time.Now()
			}
			if msg.Offset+1 >= ends[p] {
				break
			}
		}
		r.Close()
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.FinishUpgrade(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "upgrade: done in %s: %d messages read, %d events written, %d skipped (unreadable: the consumer dead-lettered them); the graph holds model %d\n",
		time.Since(start).Round(time.Millisecond), read, written, skipped, graph.ModelVersion)
	return nil
}

// endOffsets returns the end offset of every partition of topic as the upgrade starts; 0 for a
// partition without messages.
func endOffsets(ctx context.Context, brokers []string, topic string, sec kafkaconn.Security) (map[int]int64, error) {
	c, done := sec.Client(brokers, 10*time.Second)
	defer done()
	meta, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil || len(meta.Topics[0].Partitions) == 0 {
		return nil, fmt.Errorf("topic %s: not found or without partitions", topic)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range meta.Topics[0].Partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p.ID), kafka.LastOffsetOf(p.ID))
	}
	res, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends, firsts := map[int]int64{}, map[int]int64{}
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("end offset of %s/%d: %w", topic, p.Partition, p.Error)
		}
		// kafka-go answers the two requests of a partition in one entry or two
		ends[p.Partition] = max(ends[p.Partition], p.LastOffset)
		if p.FirstOffset > firsts[p.Partition] {
			firsts[p.Partition] = p.FirstOffset
		}
	}
	for p, first := range firsts {
		if first >= ends[p] {
			ends[p] = 0 // nothing left in the partition (retention): nothing to read
		}
	}
	return ends, nil
}
