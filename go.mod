module github.com/colline/colline

go 1.26.8

require (
	github.com/kelseyhightower/envconfig v1.4.0 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/neo4j/neo4j-go-driver/v5 v5.28.4 // indirect
	github.com/pierrec/lz4/v4 v4.1.15 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/segmentio/kafka-go v0.4.51 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
