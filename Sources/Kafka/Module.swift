// Module Kafka.
