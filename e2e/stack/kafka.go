package stack

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// Kafka is an admin client of the brokers with connections of its own: kafka-go's default
// transport keeps connections and goroutines after every call, so Close releases them.
type Kafka struct {
	Brokers []string
	Client  *kafka.Client
	tr      *kafka.Transport
}

// NewKafka returns an admin client of brokers.
func NewKafka(brokers ...string) *Kafka {
	tr := &kafka.Transport{DialTimeout: 10 * time.Second}
	return &Kafka{Brokers: brokers, tr: tr, Client: &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second, Transport: tr}}
}

// Close releases the client's connections.
func (k *Kafka) Close() { k.tr.CloseIdleConnections() }

// Topic is a topic to create.
type Topic struct {
	Name            string
	Partitions      int // Default: 1.
	MaxMessageBytes int // max.message.bytes. Default: 16 MiB, as dev/services and the Helm chart.
}

// CreateTopics creates topics (an existing one is left as it is) and waits until every
// partition has a leader.
func (k *Kafka) CreateTopics(ctx context.Context, topics ...Topic) error {
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{
			Topic: t.Name, NumPartitions: max(t.Partitions, 1), ReplicationFactor: 1,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "max.message.bytes", ConfigValue: strconv.Itoa(cmp.Or(t.MaxMessageBytes, 16<<20))}},
		})
	}
	res, err := k.Client.CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("create topics on %v: %w", k.Brokers, err)
	}
	for name, err := range res.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	for _, t := range topics {
		if err := k.waitLeaders(ctx, t.Name, max(t.Partitions, 1)); err != nil {
			return err
		}
	}
	return nil
}

func (k *Kafka) waitLeaders(ctx context.Context, topic string, partitions int) error {
	for deadline := time.Now().Add(30 * time.Second); ; {
		meta, err := k.Client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(meta.Topics) == 1 && meta.Topics[0].Error == nil && len(meta.Topics[0].Partitions) >= partitions {
			ok := true
			for _, p := range meta.Topics[0].Partitions {
				ok = ok && p.Leader.Host != "" && p.Error == nil
			}
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("topic %s: no leader for every partition after 30s (%v)", topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DeleteTopics deletes topics.
func (k *Kafka) DeleteTopics(ctx context.Context, names ...string) error {
	res, err := k.Client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: names})
	if err != nil {
		return fmt.Errorf("delete topics %v: %w", names, err)
	}
	for name, err := range res.Errors {
		if err != nil {
			return fmt.Errorf("delete topic %s: %w", name, err)
		}
	}
	return nil
}

// Offsets returns the first and end offsets of every partition of topic. It asks for one kind
// of offset per request: kafka-go misfiles first offsets when both kinds are asked at once.
func (k *Kafka) Offsets(ctx context.Context, topic string) (first, end map[int]int64, err error) {
	meta, err := k.Client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return nil, nil, fmt.Errorf("topic %s: %v", topic, meta.Topics)
	}
	ask := func(kind func(int) kafka.OffsetRequest) (map[int]int64, error) {
		var reqs []kafka.OffsetRequest
		for _, p := range meta.Topics[0].Partitions {
			reqs = append(reqs, kind(p.ID))
		}
		res, err := k.Client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
		if err != nil {
			return nil, fmt.Errorf("offsets of %s: %w", topic, err)
		}
		out := map[int]int64{}
		for _, p := range res.Topics[topic] {
			if p.Error != nil {
				return nil, fmt.Errorf("offsets of %s/%d: %w", topic, p.Partition, p.Error)
			}
			out[p.Partition] = max(p.FirstOffset, p.LastOffset) // the other field is kafka-go's placeholder
		}
		return out, nil
	}
	if first, err = ask(kafka.FirstOffsetOf); err != nil {
		return nil, nil, err
	}
	end, err = ask(kafka.LastOffsetOf)
	return first, end, err
}

// Messages returns the number of messages in topic: the end offsets minus the first offsets.
func (k *Kafka) Messages(ctx context.Context, topic string) (int64, error) {
	first, end, err := k.Offsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	for p, e := range end {
		n += e - first[p]
	}
	return n, nil
}

// DeleteRecords deletes the messages of topic/partition before offset, moving its log start
// offset there, as retention does. kafka-go has no DeleteRecords, so this speaks the Kafka
// protocol (DeleteRecords v1) to the first broker, which must lead the partition: a one-broker
// test cluster.
func (k *Kafka) DeleteRecords(ctx context.Context, topic string, partition int, offset int64) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", k.Brokers[0])
	if err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(30 * time.Second))
	}
	var body []byte
	str := func(s string) { body = binary.BigEndian.AppendUint16(body, uint16(len(s))); body = append(body, s...) }
	body = binary.BigEndian.AppendUint16(body, 21) // api key DeleteRecords
	body = binary.BigEndian.AppendUint16(body, 1)  // version
	body = binary.BigEndian.AppendUint32(body, 1)  // correlation id
	str("colline-stack")
	body = binary.BigEndian.AppendUint32(body, 1) // topics
	str(topic)
	body = binary.BigEndian.AppendUint32(body, 1) // partitions
	body = binary.BigEndian.AppendUint32(body, uint32(partition))
	body = binary.BigEndian.AppendUint64(body, uint64(offset))
	body = binary.BigEndian.AppendUint32(body, 30000) // timeout ms
	if _, err := conn.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)); err != nil {
		return fmt.Errorf("delete records: %w", err)
	}
	r := bufio.NewReader(conn)
	var size int32
	if err := binary.Read(r, binary.BigEndian, &size); err != nil {
		return fmt.Errorf("delete records: reading the answer: %w", err)
	}
	res := make([]byte, size)
	if _, err := io.ReadFull(r, res); err != nil {
		return fmt.Errorf("delete records: reading the answer: %w", err)
	}
	// correlation id, throttle, topics count, name, partitions count, partition, low watermark, error
	at := 4 + 4 + 4
	if len(res) < at+2 {
		return fmt.Errorf("delete records: short answer of %d bytes", len(res))
	}
	at += 2 + int(binary.BigEndian.Uint16(res[at:])) + 4 + 4 + 8
	if len(res) < at+2 {
		return fmt.Errorf("delete records: short answer of %d bytes", len(res))
	}
	if code := int16(binary.BigEndian.Uint16(res[at:])); code != 0 {
		return fmt.Errorf("delete records of %s/%d before %d: %w", topic, partition, offset, kafka.Error(code))
	}
	return nil
}

// TestTopics creates a fresh topic of partitions and its dead-letter topic, deleted when the test
// ends (close k after that: TestKafka does), and returns their names and a fresh group name, so tests sharing a broker never see each
// other's messages. prefix names the test (e.g. "ingest").
func (k *Kafka) TestTopics(t testing.TB, prefix string, partitions, maxMessageBytes int) (topic, dlq, group string) {
	t.Helper()
	suffix := NewID()
	topic, dlq, group = "colline."+prefix+"."+suffix, "colline."+prefix+"."+suffix+".dlq", "colline-"+prefix+"-"+suffix
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := k.CreateTopics(ctx, Topic{Name: topic, Partitions: partitions, MaxMessageBytes: maxMessageBytes},
		Topic{Name: dlq, MaxMessageBytes: maxMessageBytes}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.DeleteTopics(context.Background(), topic, dlq) })
	return topic, dlq, group
}

// NewID returns 8 random hex digits, to name what one test run creates.
func NewID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestBrokers returns the brokers of COLLINE_TEST_KAFKA_BROKERS (comma-separated), or skips t
// when it is not set.
func TestBrokers(t testing.TB) []string {
	t.Helper()
	b := os.Getenv("COLLINE_TEST_KAFKA_BROKERS")
	if b == "" {
		t.Skip("COLLINE_TEST_KAFKA_BROKERS is not set; run `dev/services start` and set it to its Kafka (127.0.0.1:19092 by default)")
	}
	return strings.Split(b, ",")
}

// TestKafka returns an admin client of TestBrokers, closed when t ends (after the cleanups
// registered later, such as TestTopics'), or skips t.
func TestKafka(t testing.TB) *Kafka {
	t.Helper()
	k := NewKafka(TestBrokers(t)...)
	t.Cleanup(k.Close)
	return k
}
