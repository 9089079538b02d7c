// Package kafkaconn is how colline connects to Kafka: Security (TLS and SASL, as the COLLINE_KAFKA_*
// variables set them: config.Config.KafkaSecurity) and the kafka-go dialer, transport and client
// made with it. The consumer (ingest: its reader, producers and admin requests) and the CLI
// (colline upgrade) connect through it, so that both reach a secured cluster the same way.
package kafkaconn
